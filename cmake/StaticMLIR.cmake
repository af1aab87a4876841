# MPMD_STATIC_MLIR: link MLIR and LLVM into our binaries as static archives,
# so that nothing needs libMLIR/libLLVM at run time (the wheel's extensions).
#
# Debian's static MLIR archives name the LLVM dylib (`LLVM`) in their link
# interface, so the imported targets cannot be linked as they are: this
# walks the MLIR targets our code uses and their dependencies, takes each
# one's archive, and links LLVM's own static archives (Support, Demangle)
# in place of the dylib, with zlib's archive. LLVM Support's optional
# dependencies (z3, zstd, libxml2) are left out: with unused sections
# dropped, nothing we link reaches them (scripts/wheel_check.sh checks
# what the extensions need).

# The MLIR libraries our C++ uses directly (the rest follow from them).
set(MPMD_MLIR_ROOTS
  MLIRIR MLIRParser MLIRAsmParser MLIRBytecodeReader MLIRBytecodeWriter
  MLIRPass MLIRSupport MLIRFuncDialect MLIRFuncInlinerExtension
  MLIRTransforms MLIRTransformUtils MLIRRewrite MLIRSideEffectInterfaces
  MLIRInferTypeOpInterface MLIRControlFlowInterfaces MLIRCallInterfaces
  MLIRFunctionInterfaces MLIRBytecodeOpInterface MLIRDialect)

function(mpmd_collect_archives target)
  if(NOT TARGET ${target} OR target STREQUAL "LLVM" OR target STREQUAL "MLIR")
    return()
  endif()
  get_property(seen GLOBAL PROPERTY MPMD_STATIC_SEEN)
  if(target IN_LIST seen)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY MPMD_STATIC_SEEN ${target})
  get_target_property(type ${target} TYPE)
  if(NOT type STREQUAL "STATIC_LIBRARY")
    return()
  endif()
  foreach(config RELWITHDEBINFO RELEASE NOCONFIG MINSIZEREL DEBUG)
    get_target_property(location ${target} IMPORTED_LOCATION_${config})
    if(location)
      set_property(GLOBAL APPEND PROPERTY MPMD_STATIC_ARCHIVES ${location})
      break()
    endif()
  endforeach()
  get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  if(deps)
    foreach(dep IN LISTS deps)
      mpmd_collect_archives(${dep})
    endforeach()
  endif()
endfunction()

set_property(GLOBAL PROPERTY MPMD_STATIC_SEEN "")
set_property(GLOBAL PROPERTY MPMD_STATIC_ARCHIVES "")
foreach(root IN LISTS MPMD_MLIR_ROOTS)
  mpmd_collect_archives(${root})
endforeach()
foreach(root LLVMSupport LLVMDemangle)  # in place of the LLVM dylib
  mpmd_collect_archives(${root})
endforeach()
get_property(MPMD_STATIC_ARCHIVES GLOBAL PROPERTY MPMD_STATIC_ARCHIVES)
list(LENGTH MPMD_STATIC_ARCHIVES count)
message(STATUS "Linking MLIR and LLVM statically: ${count} archives")

find_library(MPMD_ZLIB_ARCHIVE NAMES libz.a REQUIRED)
add_library(MPMDStaticMLIR INTERFACE)
target_link_libraries(MPMDStaticMLIR INTERFACE
  "$<LINK_GROUP:RESCAN,${MPMD_STATIC_ARCHIVES}>"
  ${MPMD_ZLIB_ARCHIVE} rt dl m pthread)
set(MPMD_MLIR_LIBS MPMDStaticMLIR)
# Unused functions and data are dropped at link time.
add_compile_options(-ffunction-sections -fdata-sections)
