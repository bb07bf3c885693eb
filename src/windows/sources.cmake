# The portable sources of the Windows plan compiler, shared by the host build
# (src/windows/CMakeLists.txt) and the mingw-w64 cross build (src/windows/cross/).
set(CORDON_WINDOWS_PLAN_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/acl_plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/command_line.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compiler.cpp
  ${CMAKE_CURRENT_LIST_DIR}/environment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/explain.cpp
  ${CMAKE_CURRENT_LIST_DIR}/facts_record.cpp
  ${CMAKE_CURRENT_LIST_DIR}/host_facts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lease_record.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linux_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/low_integrity.cpp
  ${CMAKE_CURRENT_LIST_DIR}/network_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/paths.cpp
  ${CMAKE_CURRENT_LIST_DIR}/plan.cpp
  ${CMAKE_CURRENT_LIST_DIR}/report.cpp
  ${CMAKE_CURRENT_LIST_DIR}/vcs_protection.cpp)
