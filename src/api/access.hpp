// Who may do what to which queue. The queue API functions are SECURITY
// INVOKER C functions that check the caller here, then run as the extension's
// owner (who owns the tables) for the rest of the call: a SECURITY DEFINER
// function could not tell who called it. Declared with CQ_QUEUE_FUNCTION.
#pragma once

#include "pg/firewall.hpp"

namespace claimqueue {

// Per-queue privileges (table claimqueue.queue_grants).
enum class QueuePrivilege { kProduce, kConsume, kManage };

const char *QueuePrivilegeName(QueuePrivilege privilege);

// The role that called the running queue API function. Valid between
// EnterAsOwner and LeaveAsOwner, which CQ_QUEUE_FUNCTION runs on every exit,
// errors included; a queue API function called from inside another (through
// SPI) has its own, and the outer one's is current again when it returns.
struct Caller {
    Oid user;               // the calling role
    bool admin;             // superuser, the extension's owner or a member of claimqueue_admin
    Oid saved_user;         // what LeaveAsOwner restores
    int saved_context;
    const Caller *previous; // the caller of the enclosing queue API function, if any
};

// Records the caller and switches to the owner of the function being called
// (the extension's owner).
void EnterAsOwner(FunctionCallInfo fcinfo, Caller *caller);
// Switches back and makes the enclosing call's caller current again.
void LeaveAsOwner(const Caller *caller);

// The caller of the queue API function running now.
const Caller *CurrentCaller();

// Raises 42501 unless the caller may do `privilege` on `queue`. A queue that
// does not exist passes (the action then reports QC001).
void RequireQueuePrivilege(text *queue, QueuePrivilege privilege, const char *action);

// The same for the queue of job `id` (a job that does not exist passes: the
// action reports QC002). A job in a queue the caller holds no privilege on
// at all is reported as one that does not exist (QC002, the same message),
// so probing ids tells a role nothing about other queues' jobs; a caller
// that holds another privilege on the queue gets the detailed 42501.
void RequireJobPrivilege(int64 id, QueuePrivilege privilege, const char *action);

// The same for the queues of the jobs `ids` (n of them), in one lookup, for
// an action that takes them in order and stops at the first it cannot: 42501
// at once, as above; returns the position of the first job the caller may
// not see (n when none), which the action is to report as QC002 when it gets
// there, as it would report a job that does not exist.
int RequireJobsPrivilege(int n, const int64 *ids, QueuePrivilege privilege, const char *action);

// Whether the caller holds any privilege on `queue` (may learn what it holds);
// true for a queue that does not exist.
bool CallerSeesQueue(text *queue);

// Raises 42501 unless the caller is an administrator (claimqueue_admin).
void RequireAdmin(const char *action);

}  // namespace claimqueue

// Declares a queue API function: the body runs as the extension's owner, with
// CurrentCaller() telling who called it. LeaveAsOwner runs on an error too
// (PG_FINALLY), so no pointer to this frame's Caller outlives it; the body is
// guarded again inside the PG_TRY, so no C++ exception crosses it.
#define CQ_QUEUE_FUNCTION(name)                                                \
    static Datum name##_as_owner(PG_FUNCTION_ARGS);                            \
    CQ_FUNCTION(name)                                                          \
    {                                                                          \
        ::claimqueue::Caller caller;                                           \
        ::claimqueue::EnterAsOwner(fcinfo, &caller);                           \
        Datum result = 0;                                                      \
        PG_TRY();                                                              \
        {                                                                      \
            result = ::claimqueue::CallGuarded(name##_as_owner, fcinfo);       \
        }                                                                      \
        PG_FINALLY();                                                          \
        {                                                                      \
            ::claimqueue::LeaveAsOwner(&caller);                               \
        }                                                                      \
        PG_END_TRY();                                                          \
        return result;                                                         \
    }                                                                          \
    static Datum name##_as_owner(PG_FUNCTION_ARGS)
