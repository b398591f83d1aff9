// Advisory-lock namespaces without database access (see lock_keys.hpp).
#include "core/lock_keys.hpp"

#include <string>

#include "core/error.hpp"
#include "core/rules.hpp"

namespace claimqueue::locks {

uint32_t Fnv1a32(std::string_view bytes)
{
    uint32_t h = 2166136261u;
    for (char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;  // unsigned: wraps mod 2^32 by definition
    }
    return h;
}

int32_t HashedKey(std::string_view utf8_bytes)
{
    // Two's complement, as pg_advisory_lock(int4, int4) stores its keys (the
    // conversion is modular in C++20 and in every compiler PostgreSQL supports).
    return static_cast<int32_t>(Fnv1a32(utf8_bytes));
}

void CheckNamespaceName(std::string_view name)
{
    const char *kHint =
        "Lock namespace names are 1 to 63 bytes of lower-case letters, digits, '_', '.' and "
        "'-', starting with a letter, digit or '_'.";
    if (name.empty())
        throw Error(sqlstate::kInvalidParameterValue, "lock namespace name must not be empty", {},
                    kHint);
    if (name.size() > static_cast<size_t>(kMaxNamespaceNameBytes))
        throw Error(sqlstate::kNameTooLong,
                    "lock namespace name " + rules::Quoted(name) + " is too long",
                    "It is " + std::to_string(name.size()) + " bytes; the limit is " +
                        std::to_string(kMaxNamespaceNameBytes) + " bytes.",
                    kHint);
    if (!rules::IsQueueNameSpelling(name))
        throw Error(sqlstate::kInvalidParameterValue,
                    "invalid lock namespace name " + rules::Quoted(name), {}, kHint);
}

void CheckLockKey(std::string_view key)
{
    if (key.empty())
        throw Error(sqlstate::kInvalidParameterValue, "lock key must not be empty");
    if (key.size() > static_cast<size_t>(kMaxLockKeyBytes))
        throw Error(sqlstate::kNameTooLong, "lock key " + rules::Quoted(key) + " is too long",
                    "It is " + std::to_string(key.size()) + " bytes; the limit is " +
                        std::to_string(kMaxLockKeyBytes) + " bytes.",
                    "Hash long names into a shorter key yourself, or register short names.");
}

KeyMode ParseKeyMode(std::string_view mode)
{
    if (mode == "registered")
        return KeyMode::kRegistered;
    if (mode == "hash")
        return KeyMode::kHash;
    if (mode == "integer")
        return KeyMode::kInteger;
    throw Error(sqlstate::kInvalidParameterValue, "invalid lock key mode " + rules::Quoted(mode),
                {}, "Key modes are 'registered', 'hash' and 'integer'.");
}

const char *KeyModeName(KeyMode mode)
{
    switch (mode) {
    case KeyMode::kRegistered:
        return "registered";
    case KeyMode::kHash:
        return "hash";
    case KeyMode::kInteger:
        return "integer";
    case KeyMode::kInternal:
        return "internal";
    }
    return "internal";
}

}  // namespace claimqueue::locks
