# dmlbench_stage(NAME <name> DIR <dir> [DEPENDS <stage>...] [LIBS <target>...]
#                [PUBLIC_LIBS <target>...] [SOURCES <file>...])
#
# One stage of the orchestrator's pipeline as a static library
# dmlbench_<name> built from orchestrator/<dir>/*.cc (main.cc excepted).
# The layering is enforced by include roots: a stage's include root holds
# only its own headers (orchestrator/<dir>/*.h, as symbolic links), and a
# stage sees only its own root and those of the stages it DEPENDS on
# (PRIVATE). So `#include "orchestrator/<higher stage>/x.h"` from a lower
# stage fails to compile: "No such file or directory". PUBLIC_LIBS are
# re-exported to every stage above (core's hashing module).
function(dmlbench_stage)
  cmake_parse_arguments(S "" "NAME;DIR" "DEPENDS;LIBS;PUBLIC_LIBS;SOURCES" ${ARGN})
  set(source_dir ${PROJECT_SOURCE_DIR}/orchestrator/${S_DIR})
  file(GLOB sources CONFIGURE_DEPENDS ${source_dir}/*.cc)
  list(FILTER sources EXCLUDE REGEX "/main\\.cc$")
  file(GLOB headers CONFIGURE_DEPENDS ${source_dir}/*.h)
  set(root ${CMAKE_BINARY_DIR}/include-roots/${S_NAME})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root}/orchestrator/${S_DIR})
  foreach(header ${headers})
    get_filename_component(file ${header} NAME)
    file(CREATE_LINK ${header} ${root}/orchestrator/${S_DIR}/${file} SYMBOLIC)
  endforeach()
  add_library(dmlbench_${S_NAME} STATIC ${sources} ${S_SOURCES})
  target_include_directories(dmlbench_${S_NAME} PUBLIC ${root})
  foreach(dep ${S_DEPENDS})
    target_link_libraries(dmlbench_${S_NAME} PRIVATE dmlbench_${dep})
  endforeach()
  if(S_LIBS)
    target_link_libraries(dmlbench_${S_NAME} PRIVATE ${S_LIBS})
  endif()
  if(S_PUBLIC_LIBS)
    target_link_libraries(dmlbench_${S_NAME} PUBLIC ${S_PUBLIC_LIBS})
  endif()
  set_property(GLOBAL APPEND PROPERTY DMLBENCH_STAGES dmlbench_${S_NAME})
endfunction()
