# ethosu-porting-kit as a CMake package:
#   find_package(ethosu-porting-kit REQUIRED)   (CMAKE_PREFIX_PATH or ethosu-porting-kit_DIR = <kit>/cmake)
#   include(<kit>/cmake/ethosu-porting-kit-config.cmake)
# then ethosu_kit_generate(...) / ethosu_add_firmware(...) (see EthosuKitFirmware.cmake).
include_guard(GLOBAL)
get_filename_component(ETHOSU_KIT_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}" ABSOLUTE)
get_filename_component(ETHOSU_KIT_ROOT "${ETHOSU_KIT_CMAKE_DIR}/.." ABSOLUTE)
set(ethosu-porting-kit_FOUND TRUE)
include("${ETHOSU_KIT_CMAKE_DIR}/EthosuKitFirmware.cmake")
