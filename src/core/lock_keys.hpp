// Advisory-lock namespaces, the pure part: the documented key hash (32-bit
// FNV-1a over UTF-8 bytes) and the rules for namespace names and text keys.
// No PostgreSQL here; unit-tested with the published FNV test vectors.
#pragma once

#include <cstdint>
#include <string_view>

namespace claimqueue::locks {

// Documented limits (docs/locks.md). Changing one is an API change.
inline constexpr int kMaxNamespaceNameBytes = 63;
inline constexpr int kMaxLockKeyBytes = 512;

// 32-bit FNV-1a (Fowler/Noll/Vo): h = 2166136261; for each byte b:
// h = (h XOR b) * 16777619 mod 2^32. Published vectors: "" -> 0x811c9dc5,
// "a" -> 0xe40c292c, "foobar" -> 0xbf9cf968.
uint32_t Fnv1a32(std::string_view bytes);

// The lock key of a text key in a hash namespace: Fnv1a32 of its UTF-8 bytes,
// read as a two's-complement int4 (the second key of pg_advisory_lock(int4, int4)).
int32_t HashedKey(std::string_view utf8_bytes);

// Throws claimqueue::Error (22023 or 42622) unless `name` is 1..63 bytes of
// [a-z0-9_.-] starting with a letter, digit or underscore (the queue-name rule).
void CheckNamespaceName(std::string_view name);

// Throws claimqueue::Error (22023 or 42622) unless the text key is 1..512 bytes.
void CheckLockKey(std::string_view key);

// The key modes a namespace is registered with (fixed for its lifetime).
enum class KeyMode { kRegistered, kHash, kInteger, kInternal };

// Parses 'registered', 'hash' or 'integer' (22023 otherwise; 'internal' is
// claimqueue's own and cannot be asked for).
KeyMode ParseKeyMode(std::string_view mode);
const char *KeyModeName(KeyMode mode);

}  // namespace claimqueue::locks
