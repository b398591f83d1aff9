// The schema version check (see schema_version.hpp).
#include "engine/schema_version.hpp"

extern "C" {
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/rel.h"
}

namespace claimqueue {
namespace {

bool schema_current = false;

// The installed version of claimqueue in this database, or nullptr.
char *InstalledVersion()
{
    Relation rel = table_open(ExtensionRelationId, AccessShareLock);
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
                CStringGetDatum("claimqueue"));
    SysScanDesc scan = systable_beginscan(rel, ExtensionNameIndexId, true, nullptr, 1, &key);
    HeapTuple tuple = systable_getnext(scan);
    char *version = nullptr;
    if (HeapTupleIsValid(tuple)) {
        bool isnull;
        Datum value = heap_getattr(tuple, Anum_pg_extension_extversion, RelationGetDescr(rel),
                                   &isnull);
        if (!isnull)
            version = TextDatumGetCString(value);
    }
    systable_endscan(scan);
    table_close(rel, AccessShareLock);
    return version;
}

}  // namespace

void SchemaAtRelationChange(Oid)
{
    schema_current = false;
}

SchemaState InstalledSchema()
{
    char *version = InstalledVersion();
    if (version == nullptr)
        return SchemaState::kAbsent;
    return strcmp(version, kSchemaVersion) == 0 ? SchemaState::kCurrent : SchemaState::kOther;
}

void RequireCurrentSchema()
{
    if (schema_current)
        return;
    char *version = InstalledVersion();
    if (version != nullptr && strcmp(version, kSchemaVersion) != 0)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("claimqueue's library is version %s, but this database has the extension "
                        "at version %s", kSchemaVersion, version),
                 errhint("Run ALTER EXTENSION claimqueue UPDATE in this database.")));
    schema_current = version != nullptr;
}

}  // namespace claimqueue
