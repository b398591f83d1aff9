# cmake -DSOURCE_DIR=... -P cmake/check_layers.cmake
# Layers include only downward: every #include "folder/file" of a source under
# src/<folder>/ names its own folder or one of a lower layer. The layers,
# lowest first (CONTRIBUTING.md, "Layout and layers"):
#   0 core     pure C++, no PostgreSQL
#   1 pg       PostgreSQL glue: SPI statements, clock, settings, text, shared
#              memory regions, the session's callbacks, the C++ firewall
#   2 cursors, wait, locks, metrics, owners   one concern each, side by side: none includes another
#   3 engine   the claim engine and queue administration
#   4 worker   launcher, reapers
#   5 api      SQL-callable functions
# src/claimqueue.cpp, the module's entry, sits above them all.
set(_rank_core 0)
set(_rank_pg 1)
set(_rank_cursors 2)
set(_rank_wait 2)
set(_rank_locks 2)
set(_rank_metrics 2)
set(_rank_owners 2)
set(_rank_engine 3)
set(_rank_worker 4)
set(_rank_api 5)

file(GLOB_RECURSE _sources RELATIVE "${SOURCE_DIR}/src"
     "${SOURCE_DIR}/src/*.cpp" "${SOURCE_DIR}/src/*.hpp" "${SOURCE_DIR}/src/*.h")
set(_errors "")
set(_checked 0)
foreach(_source IN LISTS _sources)
  if(NOT _source MATCHES "^([a-z_]+)/")
    continue()  # src/claimqueue.cpp: the top
  endif()
  set(_folder "${CMAKE_MATCH_1}")
  if(NOT DEFINED _rank_${_folder})
    string(APPEND _errors "src/${_source}: folder '${_folder}' has no layer in cmake/check_layers.cmake\n")
    continue()
  endif()
  file(STRINGS "${SOURCE_DIR}/src/${_source}" _includes REGEX "^#include \"[a-z_]+/")
  foreach(_line IN LISTS _includes)
    string(REGEX MATCH "\"([a-z_]+)/" _ "${_line}")
    set(_target "${CMAKE_MATCH_1}")
    if(NOT DEFINED _rank_${_target})
      continue()  # a PostgreSQL header (access/..., utils/...)
    endif()
    math(EXPR _checked "${_checked} + 1")
    if(_target STREQUAL _folder)
      continue()
    endif()
    if(NOT _rank_${_target} LESS _rank_${_folder})
      string(APPEND _errors "src/${_source} (layer ${_rank_${_folder}}, ${_folder}) includes ${_line} (layer ${_rank_${_target}}, ${_target}): layers include only downward\n")
    endif()
  endforeach()
endforeach()
if(_errors)
  message(FATAL_ERROR "${_errors}")
endif()
message(STATUS "layers: ${_checked} includes of claimqueue headers, all downward")
