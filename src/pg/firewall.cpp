// The C++ firewall's out-of-line half: turning a caught exception into ereport.
#include "pg/firewall.hpp"

#include <cstring>

namespace claimqueue {
namespace {

void Copy(char *dst, const char *src) noexcept
{
    strlcpy(dst, src ? src : "", 1024);
}

}  // namespace

void CaptureError(const Error &e, CaughtError *out) noexcept
{
    const char *s = e.sqlstate();
    out->sqlerrcode = MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4]);
    Copy(out->message, e.what());
    Copy(out->detail, e.detail().c_str());
    Copy(out->hint, e.hint().c_str());
}

void CaptureMessage(int sqlerrcode, const char *message, CaughtError *out) noexcept
{
    out->sqlerrcode = sqlerrcode;
    Copy(out->message, message);
    out->detail[0] = '\0';
    out->hint[0] = '\0';
}

void RaiseCaught(const CaughtError *c)
{
    ereport(ERROR,
            (errcode(c->sqlerrcode),
             errmsg_internal("%s", c->message),
             c->detail[0] ? errdetail_internal("%s", c->detail) : 0,
             c->hint[0] ? errhint("%s", c->hint) : 0));
    pg_unreachable();
}

}  // namespace claimqueue
