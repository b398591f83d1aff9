# A Citus cluster on loopback for the tests: a coordinator and two workers,
# each with shared_preload_libraries = 'citus,claimqueue'. Source it; as root
# the servers run as postgres (initdb refuses root).
#
#   cluster_start        initdb and start the three nodes, add the workers
#   cluster_stop         stop them and remove their directories
#   node_restart N       restart node N (0: the coordinator, 1 and 2: the workers)
#   node_stop N / node_start N
#   on N SQL             psql on node N, database claimqueue_citus: unaligned, tuples only
#
# Sets cq_ports (the three ports) and cq_dir (their directories). CITUS_LOGS:
# where cluster_stop copies the servers' logs.
cq_db=claimqueue_citus
cq_dir=""
cq_ports=(${CITUS_PORTS:-57630 57631 57632})
cq_as=()
[ "$(id -u)" -eq 0 ] && cq_as=(runuser -u postgres --)

on() {
    local n=$1
    shift
    psql -qXAt -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${cq_ports[$n]}" -U postgres -d "$cq_db" -c "$*"
}

node_start() {
    local n=$1
    "${cq_as[@]}" pg_ctl -D "$cq_dir/n$n" -l "$cq_dir/n$n.log" -w -t 60 start >/dev/null
}
node_stop() {
    local n=$1 mode=${2:-fast}
    "${cq_as[@]}" pg_ctl -D "$cq_dir/n$n" -m "$mode" -w -t 60 stop >/dev/null
}
node_restart() { node_stop "$1" "${2:-fast}" && node_start "$1"; }

cluster_start() {
    cq_dir=$(mktemp -d /tmp/claimqueue-citus.XXXXXX)
    chmod 755 "$cq_dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$cq_dir"
    local n
    for n in 0 1 2; do
        "${cq_as[@]}" initdb -D "$cq_dir/n$n" -U postgres --auth=trust -E UTF8 --locale=C >"$cq_dir/initdb$n.log" 2>&1 ||
            { cat "$cq_dir/initdb$n.log"; return 1; }
        cat >>"$cq_dir/n$n/postgresql.conf" <<EOF
port = ${cq_ports[$n]}
listen_addresses = '127.0.0.1'
unix_socket_directories = '$cq_dir'
shared_preload_libraries = 'citus,claimqueue'
max_connections = 100
max_prepared_transactions = 100
wal_level = logical
max_worker_processes = 24
citus.enable_statistics_collection = off
fsync = off
EOF
        node_start "$n" || { tail -20 "$cq_dir/n$n.log"; return 1; }
    done
    for n in 0 1 2; do
        psql -qX -h 127.0.0.1 -p "${cq_ports[$n]}" -U postgres -d postgres -v ON_ERROR_STOP=1 \
            -c "CREATE DATABASE $cq_db" >/dev/null || return 1
        on "$n" "CREATE EXTENSION citus" >/dev/null || return 1
    done
    on 0 "SELECT citus_set_coordinator_host('localhost', ${cq_ports[0]})" >/dev/null &&
        on 0 "SELECT citus_add_node('localhost', ${cq_ports[1]})" >/dev/null &&
        on 0 "SELECT citus_add_node('localhost', ${cq_ports[2]})" >/dev/null
}

cluster_stop() {
    [ -n "$cq_dir" ] || return 0
    local n
    for n in 0 1 2; do
        [ -f "$cq_dir/n$n/postmaster.pid" ] && node_stop "$n" immediate 2>/dev/null
    done
    if [ -n "${CITUS_LOGS:-}" ]; then
        mkdir -p "$CITUS_LOGS" && cp "$cq_dir"/n?.log "$CITUS_LOGS"/ 2>/dev/null
    fi
    rm -rf "$cq_dir"
    cq_dir=""
}
