# Sourced by demo.sh and test.sh: build flags for llama-cpp-python, which pip compiles from source.
# LLaVA is not needed. On x86-64, llama.cpp's Intel AMX kernels are left out: built with -march=native on a
# CPU that reports AMX (Sapphire Rapids and later), they crash with a segmentation fault in
# ggml_backend_amx_mul_mat at the first generation (llama.cpp issue 20824); the AVX-512/AVX2 kernels are
# used instead. Flags already set by the caller are kept; the AMX ones are added only
# where the compiler knows them.
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF}"
_no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
if [ "$(uname -m)" = x86_64 ] && echo 'int main(void){return 0;}' | "${CC:-cc}" $_no_amx -x c - -o /dev/null 2>/dev/null; then
    export CFLAGS="${CFLAGS:+$CFLAGS }$_no_amx" CXXFLAGS="${CXXFLAGS:+$CXXFLAGS }$_no_amx"
fi
unset _no_amx
