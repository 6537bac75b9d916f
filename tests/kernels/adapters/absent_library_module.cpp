// A stand-in for an adapter module whose third-party library is absent: it
// needs libnormcheck_absent_library.so, which no search path of its reaches,
// so dlopen() fails on the dependency as it does where oneDNN or libtorch is
// not installed.
extern "C" int normcheck_absent_library_function();

extern "C" [[gnu::visibility("default")]] const void* normcheck_adapter_module() {
  normcheck_absent_library_function();  // the use that makes the library needed
  return nullptr;
}
