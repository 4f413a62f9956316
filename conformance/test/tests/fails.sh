#!/bin/sh
echo "boom on stdout"
echo "boom on stderr" >&2
exit 1
