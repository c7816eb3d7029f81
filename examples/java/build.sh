#!/bin/sh
# Compile the example against Debian's Gson (apt-get install default-jdk-headless libgoogle-gson-java).
#   examples/java/build.sh [OUT_DIR]      (default: examples/java/build)
# then run it with the command it prints. GSON_JAR overrides where Gson is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/build"}
gson=${GSON_JAR:-/usr/share/java/gson.jar}
if ! command -v javac >/dev/null 2>&1; then
    echo "javac not found: install a JDK 17 or newer (Debian: apt-get install default-jdk-headless)" >&2
    exit 3
fi
if [ ! -f "$gson" ]; then
    echo "Gson not found at $gson: apt-get install libgoogle-gson-java, or set GSON_JAR" >&2
    exit 3
fi
mkdir -p "$out"
# -encoding UTF-8: the sources' own bytes, whatever the build machine's locale.
javac --release 17 -encoding UTF-8 -Xlint:all -Werror -cp "$gson" -d "$out" "$here"/src/example/rqs/*.java
echo "java -cp $out:$gson example.rqs.StdioServer"
