// The C++ firewall: the one place where C++ exceptions and PostgreSQL errors meet.
//
// Rules:
//  * Every SQL-callable function is declared with CQ_FUNCTION. It catches every
//    C++ exception at the extern "C" edge and re-raises it with ereport, keeping
//    the SQLSTATE, detail and hint of a claimqueue::Error.
//  * The ereport happens after the catch block has ended: a longjmp out of a
//    catch handler would leave the C++ runtime's exception state behind.
//  * Function bodies may call PostgreSQL (which can ereport, i.e. longjmp), so
//    they hold no object with a destructor: palloc, StringInfo and List only.
//    Code with destructors (std::string, ...) lives in src/core, which never
//    calls PostgreSQL and reaches the bodies only by throwing.
#pragma once

#include "pg/pg.hpp"

#include <new>

#include "core/error.hpp"

namespace claimqueue {

// What a caught exception said, copied into fixed buffers inside the catch
// block (no allocation there, so nothing can longjmp out of it).
struct CaughtError {
    int sqlerrcode;
    char message[1024];
    char detail[1024];
    char hint[1024];
};

void CaptureError(const Error &e, CaughtError *out) noexcept;
void CaptureMessage(int sqlerrcode, const char *message, CaughtError *out) noexcept;
[[noreturn]] void RaiseCaught(const CaughtError *caught);

// Runs body() and turns any C++ exception it throws into a PostgreSQL ERROR
// (raised after the catch block has ended). Also the edge of the background
// workers' entry points.
template <typename Body>
inline auto RunGuarded(Body body) -> decltype(body())
{
    CaughtError caught;
    try {
        return body();
    } catch (const Error &e) {
        CaptureError(e, &caught);
    } catch (const std::bad_alloc &) {
        CaptureMessage(ERRCODE_OUT_OF_MEMORY, "out of memory", &caught);
    } catch (const std::exception &e) {
        CaptureMessage(ERRCODE_INTERNAL_ERROR, e.what(), &caught);
    } catch (...) {
        CaptureMessage(ERRCODE_INTERNAL_ERROR, "unknown C++ exception", &caught);
    }
    RaiseCaught(&caught);
}

template <typename Body>
inline Datum CallGuarded(Body body, FunctionCallInfo fcinfo)
{
    return RunGuarded([&] { return body(fcinfo); });
}

}  // namespace claimqueue

// Declares the SQL-callable function `name` and opens the body that runs
// inside the firewall:  CQ_FUNCTION(cq_enqueue) { ... return ...; }
#define CQ_FUNCTION(name)                                                      \
    static Datum name##_body(PG_FUNCTION_ARGS);                                \
    extern "C" {                                                               \
    PG_FUNCTION_INFO_V1(name);                                                 \
    }                                                                          \
    extern "C" Datum name(PG_FUNCTION_ARGS)                                    \
    {                                                                          \
        return ::claimqueue::CallGuarded(name##_body, fcinfo);                 \
    }                                                                          \
    static Datum name##_body(PG_FUNCTION_ARGS)
