# Every library and tool of DESIGN.md section 3, each found from its Debian
# package. Nothing is REQUIRED on its own: what is missing is collected, and
# the configure step stops once, naming every Debian package to install
# (scripts/setup installs the same list), instead of a compile error half-way
# through the build. tests/build/missing_dependency_test.sh hides them and
# checks the message.

set(DMLBENCH_MISSING_PACKAGES "")
set(DMLBENCH_MISSING_LINES "")
# dmlbench_require(<found> <package> <what>): notes Debian package <package>
# as missing unless <found> is true.
macro(dmlbench_require found package what)
  if(NOT ${found})
    list(APPEND DMLBENCH_MISSING_PACKAGES ${package})
    list(APPEND DMLBENCH_MISSING_LINES "  ${package}: ${what}")
  endif()
endmacro()

find_package(Threads REQUIRED)  # the C library's, always there with a compiler

find_package(MPI COMPONENTS C QUIET)
dmlbench_require(MPI_C_FOUND libopenmpi-dev "Open MPI's C library and mpi.h")
find_program(MPIEXEC_PROGRAM NAMES mpirun mpiexec)
dmlbench_require(MPIEXEC_PROGRAM openmpi-bin "Open MPI's launcher mpirun")
find_package(ZLIB QUIET)
dmlbench_require(ZLIB_FOUND zlib1g-dev "zlib")
find_package(OpenSSL COMPONENTS Crypto QUIET)
dmlbench_require(OpenSSL_FOUND libssl-dev "OpenSSL's libcrypto, for SHA-256")
find_package(SQLite3 QUIET)
dmlbench_require(SQLite3_FOUND libsqlite3-dev "SQLite")
find_package(SQLiteCpp QUIET)
dmlbench_require(SQLiteCpp_FOUND libsqlitecpp-dev "SQLiteCpp")
find_package(tomlplusplus QUIET)
dmlbench_require(tomlplusplus_FOUND libtomlplusplus-dev "toml++")
find_package(libssh QUIET)
dmlbench_require(libssh_FOUND libssh-dev "libssh")
find_package(CLI11 QUIET)
dmlbench_require(CLI11_FOUND libcli11-dev "CLI11")
find_package(nlohmann_json QUIET)
dmlbench_require(nlohmann_json_FOUND nlohmann-json3-dev "nlohmann-json")
find_package(GTest QUIET)
dmlbench_require(GTest_FOUND libgtest-dev "GoogleTest")
find_package(Eigen3 3.3 NO_MODULE QUIET)
dmlbench_require(Eigen3_FOUND libeigen3-dev "Eigen 3.3 or newer")
find_package(PkgConfig QUIET)
dmlbench_require(PKG_CONFIG_FOUND pkg-config "pkg-config, to find OpenBLAS")
if(PKG_CONFIG_FOUND)
  pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
endif()
dmlbench_require(OPENBLAS_FOUND libopenblas-dev "OpenBLAS")

# Programs the tests, the emulated cluster and the report generator run.
find_program(SSHD_PROGRAM NAMES sshd PATHS /usr/sbin)
dmlbench_require(SSHD_PROGRAM openssh-server "sshd, for the SSH tests and the emulated cluster")
find_program(SSH_KEYGEN_PROGRAM NAMES ssh-keygen)
dmlbench_require(SSH_KEYGEN_PROGRAM openssh-client "ssh and ssh-keygen")
find_program(TC_PROGRAM NAMES tc PATHS /usr/sbin /sbin)
dmlbench_require(TC_PROGRAM iproute2 "ip and tc, for the emulated cluster")
find_program(SQLITE3_PROGRAM NAMES sqlite3)
dmlbench_require(SQLITE3_PROGRAM sqlite3 "the sqlite3 shell, for reports/generate")
find_program(GNUPLOT_PROGRAM NAMES gnuplot)
dmlbench_require(GNUPLOT_PROGRAM gnuplot-nox "gnuplot, for the figures of reports/generate")

set(DMLBENCH_DATASET_DIR "/usr/share/datasets/fashion-mnist" CACHE PATH
    "Directory with the Fashion-MNIST (or MNIST) IDX files")
if(NOT EXISTS "${DMLBENCH_DATASET_DIR}/train-images-idx3-ubyte.gz" AND
   NOT EXISTS "${DMLBENCH_DATASET_DIR}/train-images-idx3-ubyte")
  dmlbench_require(FALSE dataset-fashion-mnist
                   "Fashion-MNIST in ${DMLBENCH_DATASET_DIR} (or point -DDMLBENCH_DATASET_DIR=... at IDX files)")
endif()

if(DMLBENCH_MISSING_PACKAGES)
  list(JOIN DMLBENCH_MISSING_PACKAGES " " packages)
  list(JOIN DMLBENCH_MISSING_LINES "\n" lines)
  message(FATAL_ERROR "missing Debian packages: ${packages}\n${lines}\n"
                      "Install them with `apt-get install ${packages}` (scripts/setup does, as root).")
endif()
