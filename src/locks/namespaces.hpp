// Advisory-lock namespaces and registered keys: registration (race-safe, ids
// never reused) and the lookups that turn (namespace, key) into the two int4
// keys of a PostgreSQL advisory lock. Lookups never register.
#pragma once

#include "pg/pg.hpp"

#include "core/lock_keys.hpp"

namespace claimqueue {

// The namespace claimqueue reserves for its own locks (registered by the
// install script with key mode 'internal'): key 0 is the reaper, key n > 0 the
// administration lock of the queue whose queue_id is n.
inline constexpr int32 kInternalLockNamespace = 1;
inline constexpr int32 kReaperLockKey = 0;

// A lock resolved to PostgreSQL's two int4 keys.
struct NamespacedKey {
    int32 namespace_id;
    int32 key_id;
};

// lock_namespace(name, key_mode): the namespace's id, registering it with
// `key_mode` ('hash' when nullptr) if it does not exist. Two sessions
// registering one name at once get one id. QCL02 when it exists with another
// key mode than a given one.
int32 RegisterNamespace(text *name, text *key_mode);

// register_lock_key(namespace, key): the key's id in a registered namespace,
// registering it if new.
int32 RegisterLockKey(text *namespace_name, text *key);

// What a text or integer key locks. For a session lock (`for_session`), a
// namespace or key registered by the current, uncommitted transaction is
// refused (55000): a rollback would undo the registration but not the lock.
// Raises QCL01 (unknown namespace), QCL02 (wrong kind of key), QCL03
// (unregistered key), 42939 (claimqueue's own namespace).
NamespacedKey ResolveTextKey(text *namespace_name, text *key, bool for_session);
NamespacedKey ResolveIntegerKey(text *namespace_name, int32 key, bool for_session);

// The id of an existing namespace that takes session locks (advisory_unlock_all);
// QCL01 when unknown, 42939 for claimqueue's own.
int32 LockableNamespaceId(text *namespace_name);

// The key id of a text key in a hash namespace: FNV-1a over its UTF-8 bytes,
// whatever the database encoding.
int32 HashTextKey(text *key);

}  // namespace claimqueue
