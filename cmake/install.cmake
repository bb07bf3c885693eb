# What `cmake --install` puts where (docs/packaging.md): the CLI, the
# supervisor helper the run API starts, the static libcordon with its public
# headers, a CMake package (find_package(cordon): cordon::cordon) and a
# pkg-config file (cordon.pc), the schemas, the man pages and completions.
#
# Another installed library joins the same CMake package by naming the export
# set: install(TARGETS my_lib EXPORT ${CORDON_EXPORT_SET} ...) makes it
# cordon::<its EXPORT_NAME>; cordon_install_pkgconfig(NAME DESCRIPTION LIBS
# [REQUIRES ...]) writes and installs its NAME.pc next to cordon.pc.
include(CMakePackageConfigHelpers)

set(CORDON_EXPORT_SET cordon-targets)
set(CORDON_CMAKE_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cordon)

install(TARGETS cordon EXPORT ${CORDON_EXPORT_SET}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS cordon_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The run API finds it here (src/posix/run_helper.cpp: CORDON_SUPERVISOR_INSTALLED).
install(TARGETS cordon_supervisor RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cordon)
install(DIRECTORY include/cordon DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cordon/schemas)

install(EXPORT ${CORDON_EXPORT_SET} NAMESPACE cordon:: FILE cordon-targets.cmake
  DESTINATION ${CORDON_CMAKE_PACKAGE_DIR})
set(CORDON_SCHEMA_DIR ${CMAKE_INSTALL_DATADIR}/cordon/schemas)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/cordon-config.cmake.in
  ${CMAKE_BINARY_DIR}/packaging/cordon-config.cmake
  INSTALL_DESTINATION ${CORDON_CMAKE_PACKAGE_DIR}
  PATH_VARS CORDON_SCHEMA_DIR)
# 0.x: a minor version may change the C++ API (the stable surface is the C API).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/packaging/cordon-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/packaging/cordon-config.cmake
  ${CMAKE_BINARY_DIR}/packaging/cordon-config-version.cmake DESTINATION ${CORDON_CMAKE_PACKAGE_DIR})

# cordon_install_pkgconfig(NAME DESCRIPTION LIBS [REQUIRES MODULE...]): NAME.pc
# in the pkg-config directory, with Libs: -L${libdir} LIBS.
function(cordon_install_pkgconfig name description libs)
  set(CORDON_PC_NAME ${name})
  set(CORDON_PC_DESCRIPTION ${description})
  set(CORDON_PC_LIBS ${libs})
  string(JOIN " " CORDON_PC_REQUIRES ${ARGN})
  configure_file(${CMAKE_SOURCE_DIR}/cmake/pkgconfig.pc.in ${CMAKE_BINARY_DIR}/packaging/${name}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/packaging/${name}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
# libcordon is static: its own link needs are in Libs, so that a plain
# `pkg-config --libs cordon` links (libmd for SHA-256, libidn2 for IDNA).
cordon_install_pkgconfig(cordon "Process sandbox library: policies, plans, confined runs, reports"
  "-lcordon -lmd -pthread" libidn2 nlohmann_json)
