# Sourced by the test scripts (from the repository's root):
#   throwaway NAME PORT
# starts a fresh cluster .cluster/NAME on PORT (destroying any earlier one of that name),
# stops it when the calling script exits, and exports its libpq environment (PGHOST, PGPORT).
throwaway() {
  bin/cluster destroy "$1"
  bin/cluster start "$1" "$2"
  trap "bin/cluster stop $1" EXIT
  eval "$(bin/cluster env "$1" "$2")"
}
