# cmake -DSOURCE_DIR=... -P cmake/check_meta.cmake
# Checks that META.json agrees with claimqueue.control, where the version is
# written (the library and the SQL scripts take it from there at build time):
# the same version, and provides.claimqueue.file names the control file.
file(READ "${SOURCE_DIR}/claimqueue.control" _control)
if(NOT _control MATCHES "default_version *= *'([^']+)'")
  message(FATAL_ERROR "claimqueue.control: no default_version")
endif()
set(_control_version "${CMAKE_MATCH_1}")

file(READ "${SOURCE_DIR}/META.json" _meta)
string(JSON _name GET "${_meta}" name)
string(JSON _version GET "${_meta}" version)
string(JSON _ext_version GET "${_meta}" provides claimqueue version)
string(JSON _ext_file GET "${_meta}" provides claimqueue file)
string(JSON _spec GET "${_meta}" meta-spec version)

set(_errors "")
if(NOT _name STREQUAL "claimqueue")
  string(APPEND _errors "META.json name is '${_name}'\n")
endif()
if(NOT _version STREQUAL _control_version)
  string(APPEND _errors "META.json version ${_version} != control default_version ${_control_version}\n")
endif()
if(NOT _ext_version STREQUAL _control_version)
  string(APPEND _errors "META.json provides.claimqueue.version ${_ext_version} != ${_control_version}\n")
endif()
# The install script is build output (src/sql/README.md): the extension's
# file is the control file, which names the version and the library.
if(NOT _ext_file STREQUAL "claimqueue.control")
  string(APPEND _errors "META.json provides.claimqueue.file is ${_ext_file}, not claimqueue.control\n")
endif()
if(NOT EXISTS "${SOURCE_DIR}/${_ext_file}")
  string(APPEND _errors "${_ext_file} does not exist\n")
endif()
if(NOT _spec STREQUAL "1.0.0")
  string(APPEND _errors "META.json meta-spec version is ${_spec}\n")
endif()
if(_errors)
  message(FATAL_ERROR "${_errors}")
endif()
message(STATUS "META.json matches claimqueue.control (${_control_version})")
