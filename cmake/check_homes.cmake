# cmake -DSOURCE_DIR=... -P cmake/check_homes.cmake
# A concern has one home: each pattern below may appear in the sources under
# src/ and the pgTAP files only in the file named beside it.
#   object_access_hook    the session's callbacks (src/pg/session.cpp): a
#                         module gives a handler (OnDatabaseDrop)
#   array_contains_nulls  the array arguments' checks (ArrayArg)
#   pset tuples_only      the pgTAP files' setup, which each includes
set(_homes
  "object_access_hook" "src/pg/session.cpp"
  "array_contains_nulls" "src/api/args.cpp"
  "pset tuples_only" "test/pgtap/setup.psql")

file(GLOB_RECURSE _sources RELATIVE "${SOURCE_DIR}"
     "${SOURCE_DIR}/src/*.cpp" "${SOURCE_DIR}/src/*.hpp" "${SOURCE_DIR}/src/*.h"
     "${SOURCE_DIR}/test/pgtap/*.sql" "${SOURCE_DIR}/test/pgtap/*.psql")
set(_errors "")
list(LENGTH _homes _n)
math(EXPR _last "${_n} - 1")
foreach(_i RANGE 0 ${_last} 2)
  math(EXPR _j "${_i} + 1")
  list(GET _homes ${_i} _pattern)
  list(GET _homes ${_j} _home)
  set(_found FALSE)
  foreach(_source IN LISTS _sources)
    file(STRINGS "${SOURCE_DIR}/${_source}" _hits REGEX "${_pattern}")
    if(NOT _hits)
      continue()
    endif()
    if(_source STREQUAL _home)
      set(_found TRUE)
    else()
      string(APPEND _errors "${_source} uses ${_pattern}, whose one home is ${_home}\n")
    endif()
  endforeach()
  if(NOT _found)
    string(APPEND _errors "${_home} no longer uses ${_pattern}: update cmake/check_homes.cmake\n")
  endif()
endforeach()
if(_errors)
  message(FATAL_ERROR "${_errors}")
endif()
math(EXPR _pairs "${_n} / 2")
message(STATUS "homes: ${_pairs} patterns, each in its one file")
