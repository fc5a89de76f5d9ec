# The committed databases of reports/data/. Git keeps each as NAME.db.tar.xz
# (a tar of the one file NAME.db, xz-compressed: about a seventh of its
# size); configuring the build expands it beside the archive as NAME.db,
# byte for byte, the path every command, test and script names. NAME.db is
# not tracked (.gitignore). It owns only those two files per database and a
# stamp, .NAME.db.expanded, that records which archive the database came
# from and the database's sha256 as expanded.
#
# At configure time (include() from the top-level CMakeLists.txt) a database
# is expanded when it is missing, or when its archive changed (a pull) and
# the database is still the one expanded before. A database changed since
# (a study re-run into it) is never overwritten: a warning says how to keep
# it or take the committed one. A changed archive re-runs the configure step.
#
# As a script:
#   cmake -P cmake/ReportData.cmake expand   the same, without a build
#   cmake -P cmake/ReportData.cmake pack     archives every database that
#       differs from its archive (or has none), to be committed
# Both act on every NAME.db(.tar.xz) under reports/data/.

set(DMLBENCH_REPORT_DATA_DIR ${CMAKE_CURRENT_LIST_DIR}/../reports/data)
cmake_path(NORMAL_PATH DMLBENCH_REPORT_DATA_DIR)

# The stamp of DB: its archive's sha256 and DB's own, as last expanded or
# packed (both "" when there is none).
function(_dmlbench_read_stamp db archive_sha256_var db_sha256_var)
  cmake_path(GET db FILENAME name)
  cmake_path(GET db PARENT_PATH dir)
  set(stamp ${dir}/.${name}.expanded)
  set(archive_sha256 "")
  set(db_sha256 "")
  if(EXISTS ${stamp})
    file(STRINGS ${stamp} lines)
    foreach(line IN LISTS lines)
      if(line MATCHES "^archive ([0-9a-f]+)$")
        set(archive_sha256 ${CMAKE_MATCH_1})
      elseif(line MATCHES "^database ([0-9a-f]+)$")
        set(db_sha256 ${CMAKE_MATCH_1})
      endif()
    endforeach()
  endif()
  set(${archive_sha256_var} ${archive_sha256} PARENT_SCOPE)
  set(${db_sha256_var} ${db_sha256} PARENT_SCOPE)
endfunction()

function(_dmlbench_write_stamp db archive_sha256 db_sha256)
  cmake_path(GET db FILENAME name)
  cmake_path(GET db PARENT_PATH dir)
  file(WRITE ${dir}/.${name}.expanded "archive ${archive_sha256}\ndatabase ${db_sha256}\n")
endfunction()

# Expands ARCHIVE (DIR/NAME.db.tar.xz) into a fresh directory and sets OUT
# to the database it holds. The caller renames or removes it.
function(_dmlbench_unpack archive out)
  cmake_path(GET archive PARENT_PATH dir)
  cmake_path(GET archive FILENAME name)
  string(REGEX REPLACE "\\.tar\\.xz$" "" db_name ${name})
  string(RANDOM LENGTH 8 unique)  # two build trees configured at once expand apart
  set(work ${dir}/.${db_name}.${unique}.partial)
  file(ARCHIVE_EXTRACT INPUT ${archive} DESTINATION ${work} PATTERNS ${db_name} TOUCH)
  if(NOT EXISTS ${work}/${db_name})
    file(REMOVE_RECURSE ${work})
    message(FATAL_ERROR "${archive} does not hold ${db_name}")
  endif()
  set(${out} ${work}/${db_name} PARENT_SCOPE)
endfunction()

# Brings DIR/NAME.db up to date with DIR/NAME.db.tar.xz, as the header says.
function(_dmlbench_expand_one archive)
  string(REGEX REPLACE "\\.tar\\.xz$" "" db ${archive})
  cmake_path(GET db FILENAME name)
  file(SHA256 ${archive} archive_sha256)
  _dmlbench_read_stamp(${db} stamped_archive stamped_db)
  if(EXISTS ${db} AND archive_sha256 STREQUAL stamped_archive)
    return()  # expanded from this archive before; changed since or not, it is the user's
  endif()
  if(EXISTS ${db})
    file(SHA256 ${db} db_sha256)
  endif()
  _dmlbench_unpack(${archive} expanded)
  file(SHA256 ${expanded} expanded_sha256)
  if(NOT EXISTS ${db} OR db_sha256 STREQUAL stamped_db OR db_sha256 STREQUAL expanded_sha256)
    file(RENAME ${expanded} ${db})
    _dmlbench_write_stamp(${db} ${archive_sha256} ${expanded_sha256})
    message(STATUS "reports/data: ${name} expanded from ${name}.tar.xz")
  else()
    message(WARNING "reports/data/${name} differs from the committed reports/data/${name}.tar.xz "
                    "and was changed since it was expanded, so it is kept. To commit it: "
                    "cmake -P cmake/ReportData.cmake pack. To take the committed one: remove "
                    "reports/data/${name} and configure again.")
  endif()
  cmake_path(GET expanded PARENT_PATH work)
  file(REMOVE_RECURSE ${work})
endfunction()

function(dmlbench_expand_report_data)
  file(GLOB archives ${DMLBENCH_REPORT_DATA_DIR}/*.db.tar.xz)
  list(SORT archives)
  foreach(archive IN LISTS archives)
    _dmlbench_expand_one(${archive})
  endforeach()
  if(CMAKE_PROJECT_NAME)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${archives})
  endif()
endfunction()

# Archives every database that is not what its archive holds. A database
# with a write-ahead log still open is refused: its file alone is not the
# database until the last connection closes.
function(dmlbench_pack_report_data)
  file(GLOB dbs ${DMLBENCH_REPORT_DATA_DIR}/*.db)
  list(SORT dbs)
  foreach(db IN LISTS dbs)
    cmake_path(GET db FILENAME name)
    if(EXISTS ${db}-wal)
      file(SIZE ${db}-wal wal_bytes)
      if(wal_bytes GREATER 0)
        message(FATAL_ERROR "reports/data/${name}-wal is not empty: close every program that has "
                            "reports/data/${name} open, then pack again")
      endif()
    endif()
    file(SHA256 ${db} db_sha256)
    set(archive ${db}.tar.xz)
    if(EXISTS ${archive})
      _dmlbench_read_stamp(${db} stamped_archive stamped_db)
      file(SHA256 ${archive} archive_sha256)
      if(archive_sha256 STREQUAL stamped_archive AND db_sha256 STREQUAL stamped_db)
        continue()
      endif()
      _dmlbench_unpack(${archive} expanded)
      file(SHA256 ${expanded} expanded_sha256)
      cmake_path(GET expanded PARENT_PATH work)
      file(REMOVE_RECURSE ${work})
      if(db_sha256 STREQUAL expanded_sha256)
        _dmlbench_write_stamp(${db} ${archive_sha256} ${db_sha256})
        continue()
      endif()
    endif()
    # Archived from inside the directory, so that the member is NAME.db alone.
    execute_process(COMMAND ${CMAKE_COMMAND} -DDMLBENCH_ARCHIVE=${name} -P ${_dmlbench_report_data_script}
                    WORKING_DIRECTORY ${DMLBENCH_REPORT_DATA_DIR} COMMAND_ERROR_IS_FATAL ANY)
    file(RENAME ${archive}.partial ${archive})
    file(SHA256 ${archive} archive_sha256)
    _dmlbench_write_stamp(${db} ${archive_sha256} ${db_sha256})
    message(STATUS "reports/data: ${name} packed into ${name}.tar.xz; commit it")
  endforeach()
endfunction()

set(_dmlbench_report_data_script ${CMAKE_CURRENT_LIST_FILE})

if(DMLBENCH_ARCHIVE)
  # The pack step's child: a fixed time, so that packing the same database
  # twice gives the same archive.
  file(ARCHIVE_CREATE OUTPUT ${DMLBENCH_ARCHIVE}.tar.xz.partial PATHS ${DMLBENCH_ARCHIVE} FORMAT gnutar
       COMPRESSION XZ COMPRESSION_LEVEL 9 MTIME "1970-01-01 00:00:00 UTC")
elseif(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(CMAKE_ARGC EQUAL 4 AND CMAKE_ARGV3 STREQUAL "expand")
    dmlbench_expand_report_data()
  elseif(CMAKE_ARGC EQUAL 4 AND CMAKE_ARGV3 STREQUAL "pack")
    dmlbench_pack_report_data()
  else()
    message(FATAL_ERROR "usage: cmake -P cmake/ReportData.cmake expand|pack")
  endif()
endif()
