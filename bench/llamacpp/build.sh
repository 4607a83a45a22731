#!/usr/bin/env bash
# Builds bench/llamacpp's harness: llama.cpp's chat layer behind a JSON-lines
# pipe, for compare.py. Not part of CI: a fresh build takes minutes.
#
#   LLAMACPP_DIR   where the sdist is downloaded, unpacked and built
#                  (default: $HOME/.cache/templatestudio-llamacpp)
#   LLAMACPP_JOBS  parallel compile jobs (default: 2)
#   PYTHON         the Python whose pip downloads the sdist
#                  (default: the project's .venv, else python3)
#
# llama.cpp comes from PyPI's llama-cpp-python sdist, which vendors it under
# vendor/llama.cpp. Every step is skipped when its result is already there,
# so a second run only relinks what changed. Prints the harness path last.
set -euo pipefail

VERSION=0.3.36
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
LLAMACPP_DIR="${LLAMACPP_DIR:-$HOME/.cache/templatestudio-llamacpp}"
JOBS="${LLAMACPP_JOBS:-2}"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$REPO/.venv/bin/python" ]]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi

SDIST="$LLAMACPP_DIR/llama_cpp_python-$VERSION.tar.gz"
SOURCE="$LLAMACPP_DIR/llama_cpp_python-$VERSION/vendor/llama.cpp"
BUILD="$LLAMACPP_DIR/build-harness"
started=$SECONDS

mkdir -p "$LLAMACPP_DIR"
if [[ ! -f "$SDIST" ]]; then
    echo "== downloading llama-cpp-python $VERSION (sdist) to $LLAMACPP_DIR"
    "$PYTHON" -m pip download "llama-cpp-python==$VERSION" --no-deps --no-binary :all: -d "$LLAMACPP_DIR"
fi
if [[ ! -f "$SOURCE/common/chat.h" ]]; then
    echo "== unpacking $SDIST"
    tar -xzf "$SDIST" -C "$LLAMACPP_DIR"
fi

if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
    echo "== configuring $BUILD"
    generator=()
    if command -v ninja >/dev/null; then generator=(-G Ninja); fi
    cmake -S "$HERE" -B "$BUILD" "${generator[@]}" \
        -DLLAMACPP_SOURCE="$SOURCE" \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_COMMON=ON \
        -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_TOOLS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=OFF \
        -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DGGML_OPENMP=OFF \
        -DGGML_NATIVE=ON >"$LLAMACPP_DIR/configure.log" 2>&1 \
        || { tail -40 "$LLAMACPP_DIR/configure.log"; exit 1; }
fi

echo "== building (-j$JOBS); the log is $LLAMACPP_DIR/build.log"
cmake --build "$BUILD" --target llamacpp-chat-harness -j "$JOBS" >"$LLAMACPP_DIR/build.log" 2>&1 \
    || { tail -40 "$LLAMACPP_DIR/build.log"; exit 1; }

echo "== done in $((SECONDS - started)) s"
echo "$BUILD/llamacpp-chat-harness"
