// The library the stand-in modules need (absent_library_module.cpp). The
// stand-ins carry no RPATH to the directory it is built in, so for them it is
// absent, as oneDNN or libtorch is where it is not installed.
extern "C" [[gnu::visibility("default")]] int normcheck_absent_library_function() { return 0; }
