// claimqueue::Error: a user-facing error raised by pure C++ code (no PostgreSQL
// calls), carried to the SQL edge where the firewall turns it into an ereport
// with the same SQLSTATE, message, detail and hint.
#pragma once

#include <exception>
#include <string>
#include <utility>

namespace claimqueue {

class Error : public std::exception {
public:
    Error(const char *sqlstate, std::string message, std::string detail = {},
          std::string hint = {})
        : message_(std::move(message)), detail_(std::move(detail)), hint_(std::move(hint))
    {
        for (int i = 0; i < 5; i++)
            sqlstate_[i] = sqlstate[i];
        sqlstate_[5] = '\0';
    }

    const char *what() const noexcept override { return message_.c_str(); }
    const char *sqlstate() const noexcept { return sqlstate_; }
    const std::string &detail() const noexcept { return detail_; }
    const std::string &hint() const noexcept { return hint_; }

private:
    char sqlstate_[6];
    std::string message_;
    std::string detail_;
    std::string hint_;
};

// Standard SQLSTATEs used by the pure code, spelled as PostgreSQL spells them.
namespace sqlstate {
inline constexpr const char *kInvalidParameterValue = "22023";
inline constexpr const char *kNullValueNotAllowed = "22004";
inline constexpr const char *kNumericValueOutOfRange = "22003";
inline constexpr const char *kNameTooLong = "42622";
inline constexpr const char *kProgramLimitExceeded = "54000";
inline constexpr const char *kInternalError = "XX000";
}  // namespace sqlstate

}  // namespace claimqueue
