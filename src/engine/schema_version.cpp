// The schema version check (see schema_version.hpp).
#include "engine/schema_version.hpp"

#include "core/versions.hpp"

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

// What RequireServedSchema found last; kAbsent: look again.
SchemaState served = SchemaState::kAbsent;

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

SchemaState StateOf(const char *version)
{
    if (version == nullptr)
        return SchemaState::kAbsent;
    if (strcmp(version, kSchemaVersion) == 0)
        return SchemaState::kCurrent;
    if (strcmp(version, kPreviousSchemaVersion) == 0)
        return SchemaState::kPrevious;
    return CompareVersions(version, kPreviousSchemaVersion) < 0 ? SchemaState::kOlder
                                                                : SchemaState::kNewer;
}

}  // namespace

void SchemaAtRelationChange(Oid)
{
    served = SchemaState::kAbsent;
}

SchemaState InstalledSchema()
{
    return StateOf(InstalledVersion());
}

SchemaState RequireServedSchema()
{
    if (served != SchemaState::kAbsent)
        return served;
    char *version = InstalledVersion();
    SchemaState state = StateOf(version);
    if (state == SchemaState::kOlder)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("claimqueue's library is version %s, but this database has the extension "
                        "at version %s", kSchemaVersion, version),
                 errdetail("This library serves databases at version %s or %s.", kSchemaVersion,
                           kPreviousSchemaVersion),
                 errhint("Run ALTER EXTENSION claimqueue UPDATE in this database.")));
    if (state == SchemaState::kNewer)
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("claimqueue's library is version %s, but this database has the extension "
                        "at version %s", kSchemaVersion, version),
                 errdetail("This library serves databases at version %s or %s.", kSchemaVersion,
                           kPreviousSchemaVersion),
                 errhint("Install claimqueue %s on this server and restart it.", version)));
    served = state;
    return state;
}

}  // namespace claimqueue
