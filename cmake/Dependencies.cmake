# Every library of DESIGN.md section 3, each found from its Debian package.
find_package(MPI REQUIRED COMPONENTS C)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(SQLite3 REQUIRED)
find_package(SQLiteCpp REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(libssh REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(GTest REQUIRED)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)

# Where Open MPI's launcher lives, for tests that run through it.
find_program(MPIEXEC_PROGRAM NAMES mpirun mpiexec REQUIRED)
find_program(SSHD_PROGRAM NAMES sshd PATHS /usr/sbin)

set(DMLBENCH_DATASET_DIR "/usr/share/datasets/fashion-mnist" CACHE PATH
    "Directory with the Fashion-MNIST (or MNIST) IDX files")
