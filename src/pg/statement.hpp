// Prepared SPI statements, planned once per backend and kept (SPI_keepplan).
// The plan cache revalidates them after DDL, so DROP/CREATE EXTENSION in the
// same session is safe: the text is re-analysed, with every name qualified.
#pragma once

#include "pg/pg.hpp"

namespace claimqueue {

struct Statement {
    const char *sql;
    int nargs;
    Oid argtypes[10];
    SPIPlanPtr plan;      // NULL until first use
    bool custom_plan;     // plan for each call's values instead of the generic plan
    SPIPlanPtr routed_plan;     // the text on RouteJobsTo's table, while it is set
    char routed_to[2 * NAMEDATALEN + 8];  // the table routed_plan reads
};

// While set (a qualified table name; nullptr: off), a statement that names
// claimqueue.jobs reads and writes that table instead: under Citus, the local
// shard of the queue a call serves, a plain table to PostgreSQL, where Citus
// would plan the statement across the distributed table (and refuses some,
// such as an UPDATE calling a volatile function). Returns the previous one.
const char *RouteJobsTo(const char *table);

// Runs a prepared statement inside the caller's SPI connection and returns
// SPI_processed. `nulls` uses SPI's convention (' ' = value, 'n' = NULL) and may
// be NULL when no argument is NULL. Raises on any SPI failure.
uint64 Execute(Statement *stmt, Datum *values, const char *nulls, long max_rows = 0);

// As Execute, but the result rows go straight into `out` (allocated in
// `out_context`), without SPI's result table: for a set-returning function
// whose result columns are exactly the statement's. Returns the rows stored.
uint64 ExecuteInto(Statement *stmt, Datum *values, const char *nulls, Tuplestorestate *out,
                   MemoryContext out_context);

// As Execute, but read-only and reading with the latest snapshot instead of
// the transaction's: what has committed by now, also under REPEATABLE READ.
uint64 ExecuteLatest(Statement *stmt, Datum *values, const char *nulls, long max_rows = 0);

// Opens a cursor on a prepared statement inside the caller's SPI connection,
// with a snapshot taken now (READ COMMITTED); SPI_cursor_fetch reads it in
// pieces, and a FOR UPDATE cursor locks each row as it is fetched. Close it
// with SPI_cursor_close (an error closes it with the transaction).
Portal OpenCursor(Statement *stmt, Datum *values, const char *nulls);

// Column `col` (1-based) of result row `row`; *isnull is set when given.
Datum ResultValue(uint64 row, int col, bool *isnull = nullptr);

// A bigint[] of n values.
ArrayType *Int8Array(Datum *values, int n);

// SPI_connect / SPI_finish with errors raised as PostgreSQL errors.
void ConnectSpi();
void FinishSpi();

}  // namespace claimqueue
