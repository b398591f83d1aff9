// Prepared SPI statements (see statement.hpp).
#include "pg/statement.hpp"

#include "pg/search_path.hpp"

extern "C" {
#include "executor/tstoreReceiver.h"
#include "lib/stringinfo.h"
#include "nodes/params.h"
#include "utils/snapmgr.h"
}

namespace claimqueue {

static char routed_to[2 * NAMEDATALEN + 8];
static bool routing = false;

const char *RouteJobsTo(const char *table)
{
    static char previous[2 * NAMEDATALEN + 8];
    bool was = routing;
    strlcpy(previous, routed_to, sizeof(previous));
    routing = table != nullptr;
    strlcpy(routed_to, routing ? table : "", sizeof(routed_to));
    return was ? previous : nullptr;
}

// stmt->sql with every mention of the table claimqueue.jobs (not of a longer
// name) replaced by `table`; nullptr when it names none.
static char *Routed(const char *sql, const char *table)
{
    static const char name[] = "claimqueue.jobs";
    StringInfoData out;
    bool any = false;
    initStringInfo(&out);
    const char *p = sql;
    const char *at;
    while ((at = strstr(p, name)) != nullptr) {
        const char *end = at + sizeof(name) - 1;
        bool whole = !(isalnum((unsigned char) *end) || *end == '_' || *end == '$') &&
                     (at == sql || !(isalnum((unsigned char) at[-1]) || at[-1] == '_'));
        appendBinaryStringInfo(&out, p, (int) (at - p));
        appendStringInfoString(&out, whole ? table : name);
        any = any || whole;
        p = end;
    }
    appendStringInfoString(&out, p);
    return any ? out.data : nullptr;
}

static SPIPlanPtr Prepared(Statement *stmt)
{
    if (routing) {
        if (stmt->routed_plan != nullptr && strcmp(stmt->routed_to, routed_to) == 0)
            return stmt->routed_plan;
        char *sql = Routed(stmt->sql, routed_to);
        if (sql != nullptr) {
            SPIPlanPtr plan = SPI_prepare_cursor(
                sql, stmt->nargs, stmt->argtypes,
                stmt->custom_plan ? CURSOR_OPT_CUSTOM_PLAN : CURSOR_OPT_GENERIC_PLAN);
            if (plan == nullptr)
                elog(ERROR, "claimqueue: SPI_prepare failed: %s",
                     SPI_result_code_string(SPI_result));
            if (SPI_keepplan(plan) != 0)
                elog(ERROR, "claimqueue: SPI_keepplan failed");
            pfree(sql);
            if (stmt->routed_plan != nullptr)
                SPI_freeplan(stmt->routed_plan);
            stmt->routed_plan = plan;
            strlcpy(stmt->routed_to, routed_to, sizeof(stmt->routed_to));
            return plan;
        }
    }
    if (stmt->plan == nullptr) {
        // The generic plan, unless the statement asks otherwise: almost every
        // statement here is a short indexed lookup whose plan does not depend
        // on the values, and a custom plan would be re-planned on every call.
        SPIPlanPtr plan = SPI_prepare_cursor(
            stmt->sql, stmt->nargs, stmt->argtypes,
            stmt->custom_plan ? CURSOR_OPT_CUSTOM_PLAN : CURSOR_OPT_GENERIC_PLAN);
        if (plan == nullptr)
            elog(ERROR, "claimqueue: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
        if (SPI_keepplan(plan) != 0)
            elog(ERROR, "claimqueue: SPI_keepplan failed");
        stmt->plan = plan;
    }
    return stmt->plan;
}

// SPI_processed after an execution that returned `rc`; raises on failure.
static uint64 Processed(int rc, const Statement *stmt)
{
    if (rc < 0)
        elog(ERROR, "claimqueue: statement failed (%s): %s", SPI_result_code_string(rc),
             stmt->sql);
    return SPI_processed;
}

uint64 Execute(Statement *stmt, Datum *values, const char *nulls, long max_rows)
{
    return Processed(SPI_execute_plan(Prepared(stmt), values, nulls, false, max_rows), stmt);
}

uint64 ExecuteInto(Statement *stmt, Datum *values, const char *nulls, Tuplestorestate *out,
                   MemoryContext out_context)
{
    SPIPlanPtr plan = Prepared(stmt);
    ParamListInfo params = makeParamList(stmt->nargs);
    for (int i = 0; i < stmt->nargs; i++) {
        ParamExternData *param = &params->params[i];
        param->value = values[i];
        param->isnull = nulls != nullptr && nulls[i] == 'n';
        param->pflags = PARAM_FLAG_CONST;
        param->ptype = stmt->argtypes[i];
    }
    // Detoasted as PL/pgSQL's RETURN QUERY does: the store outlives this statement.
    DestReceiver *dest = CreateDestReceiver(DestTuplestore);
    SetTuplestoreDestReceiverParams(dest, out, out_context, true, nullptr, nullptr);
    SPIExecuteOptions options;
    memset(&options, 0, sizeof(options));
    options.params = params;
    options.dest = dest;
    uint64 n = Processed(SPI_execute_plan_extended(plan, &options), stmt);
    dest->rDestroy(dest);
    return n;
}

uint64 ExecuteLatest(Statement *stmt, Datum *values, const char *nulls, long max_rows)
{
    return Processed(SPI_execute_snapshot(Prepared(stmt), values, nulls, GetLatestSnapshot(),
                                          InvalidSnapshot, true, false, max_rows),
                     stmt);
}

Portal OpenCursor(Statement *stmt, Datum *values, const char *nulls)
{
    Portal portal = SPI_cursor_open(nullptr, Prepared(stmt), values, nulls, false);
    if (portal == nullptr)
        elog(ERROR, "claimqueue: SPI_cursor_open failed: %s", SPI_result_code_string(SPI_result));
    return portal;
}

Datum ResultValue(uint64 row, int col, bool *isnull)
{
    bool null_here;
    Datum d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &null_here);
    if (isnull)
        *isnull = null_here;
    return d;
}

ArrayType *Int8Array(Datum *values, int n)
{
    return construct_array(values, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

namespace {

// The search_path pins of the open SPI connections, innermost last: each
// FinishSpi undoes its ConnectSpi's pin. An error undoes the pins itself (the
// abort of the transaction or subtransaction restores the setting), so the
// callbacks below only forget the entries it left.
struct SpiPin {
    int guc_level;
    SubTransactionId subtransaction;
};
constexpr int kMaxSpiPins = 64;
SpiPin spi_pins[kMaxSpiPins];
int nspi_pins = 0;

void ForgetSpiPins(XactEvent, void *)
{
    nspi_pins = 0;
}

void ForgetSubtransactionSpiPins(SubXactEvent event, SubTransactionId subtransaction,
                                 SubTransactionId, void *)
{
    if (event != SUBXACT_EVENT_ABORT_SUB)
        return;
    // Subtransaction ids grow: the aborted one's entries and its children's.
    while (nspi_pins > 0 && spi_pins[nspi_pins - 1].subtransaction >= subtransaction)
        nspi_pins--;
}

}  // namespace

void ConnectSpi()
{
    static bool callbacks_registered = false;
    if (!callbacks_registered) {
        RegisterXactCallback(ForgetSpiPins, nullptr);
        RegisterSubXactCallback(ForgetSubtransactionSpiPins, nullptr);
        callbacks_registered = true;
    }
    if (nspi_pins >= kMaxSpiPins)
        elog(ERROR, "claimqueue: more than %d nested SPI connections", kMaxSpiPins);
    int rc = SPI_connect();
    if (rc != SPI_OK_CONNECT)
        elog(ERROR, "claimqueue: SPI_connect failed: %s", SPI_result_code_string(rc));
    spi_pins[nspi_pins].subtransaction = GetCurrentSubTransactionId();
    spi_pins[nspi_pins].guc_level = PinSearchPath();
    nspi_pins++;
}

void FinishSpi()
{
    if (nspi_pins > 0)
        UnpinSearchPath(spi_pins[--nspi_pins].guc_level);
    int rc = SPI_finish();
    if (rc != SPI_OK_FINISH)
        elog(ERROR, "claimqueue: SPI_finish failed: %s", SPI_result_code_string(rc));
}

}  // namespace claimqueue
