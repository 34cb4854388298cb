#!/bin/sh
# Starts one node of docker-compose.replicated.yml's Sentinel group as what
# the group needs now, instead of what it was at the first start:
#
#   redis-ha.sh data [redis-server options...]   a Redis data node
#   redis-ha.sh sentinel                         a sentinel
#
# Both ask the sentinels who the master is before they start. A data node
# then starts as a replica of that master (`--replicaof`), or as the master
# when the answer is its own address; a sentinel monitors that master. The
# answer with the highest config epoch wins (the newest failover), as it does
# among the sentinels themselves: right after a failover only its leader
# names the new master until its hello messages reach the others, so a
# majority would still name the old one, and a restarted old master would
# start as a second master. Among answers of the same epoch, the one most
# sentinels give wins.
# Each sentinel is asked for its config epoch (SENTINEL MASTER), then for
# the address (SENTINEL GET-MASTER-ADDR-BY-NAME), then for the epoch again.
# The address must come from GET-MASTER-ADDR-BY-NAME: while the leader
# reconfigures the replicas, its SENTINEL MASTER already shows the new epoch
# next to the old master's ip. An answer whose epoch changed while it was
# asked is dropped, and the round is asked again.
# When no sentinel answers in ASK_ROUNDS rounds (the group's first start, or
# every sentinel down), the node falls back to FIRST_MASTER, the address the
# group started with.
#
# Every address is an IPv4 address, so nothing here, in Redis or in the
# sentinels resolves a host name: a failover never waits on DNS.
#
# Environment (the compose file sets it):
#   NODE_IP        this node's fixed address
#   NODE_PORT      its port; 6379 for data, 26379 for sentinel by default
#   FIRST_MASTER   the master's address when no sentinel answers
#   SENTINELS      the sentinels, "ip:port ip:port ..."
#   MASTER_NAME    the name the sentinels monitor
#   QUORUM, DOWN_AFTER_MS, FAILOVER_TIMEOUT_MS   sentinel only
#   SENTINEL_CONF  where the sentinel's file goes; /tmp/sentinel.conf
#   ASK_TIMEOUT, ASK_ROUNDS   seconds per question (2), rounds (3)
#
# It runs under the image's entrypoint (docker-entrypoint.sh), which drops
# to the redis user; POSIX sh, for busybox (Alpine) and dash (Debian).
set -u

role=${1:?usage: redis-ha.sh data|sentinel [redis-server options...]}
shift
case $role in
sentinel) NODE_PORT=${NODE_PORT:-26379} ;;
*) NODE_PORT=${NODE_PORT:-6379} ;;
esac

# sentinel_says prints what sentinel $1 answers to SENTINEL $2 about the
# master, one field per line, within ASK_TIMEOUT seconds.
sentinel_says() {
	timeout "${ASK_TIMEOUT:-2}" redis-cli --raw -h "${1%:*}" -p "${1##*:}" SENTINEL "$2" "$MASTER_NAME"
}

# ask_one prints "epoch ip port" as sentinel $1 names the master, or nothing
# (and why on stderr) when it gives no answer or its epoch changed meanwhile.
ask_one() {
	e1=$(master_epoch "$1")
	[ -n "$e1" ] || { echo "no answer"; return; }
	addr=$(sentinel_says "$1" GET-MASTER-ADDR-BY-NAME | awk 'NR == 1 { ip = $0 } NR == 2 { print ip, $0 }')
	[ -n "$addr" ] || { echo "no address"; return; }
	e2=$(master_epoch "$1")
	if [ "$e1" != "$e2" ]; then
		echo "its config epoch went from $e1 to $e2 while asked"
		return
	fi
	echo "$e1 $addr" >&3
}

# master_epoch prints the config epoch sentinel $1 holds for the master.
master_epoch() {
	sentinel_says "$1" MASTER | awk 'NR % 2 == 1 { k = $0; next } k == "config-epoch" { print; exit }'
}

# ask_master prints "ip port" of the master named under the newest config
# epoch, or nothing. It asks every sentinel at once in up to ASK_ROUNDS
# rounds until one answers, and reports on stderr why a sentinel gave no
# answer.
ask_master() {
	dir=$(mktemp -d)
	round=0
	while [ "$round" -lt "${ASK_ROUNDS:-3}" ]; do
		round=$((round + 1))
		i=0
		for s in $SENTINELS; do
			i=$((i + 1))
			[ "$s" = "$NODE_IP:$NODE_PORT" ] && continue
			ask_one "$s" 3>"$dir/$i.out" >"$dir/$i.why" 2>&1 &
		done
		wait
		i=0
		for s in $SENTINELS; do
			i=$((i + 1))
			[ -s "$dir/$i.why" ] && echo "redis-ha: round $round: $s: $(cat "$dir/$i.why")" >>"$dir/log"
		done
		# Keep the answers of the top epoch, then the most given address.
		cat "$dir"/*.out 2>/dev/null | grep -E '^[0-9]+ [0-9]+\.[0-9]+\.[0-9]+\.[0-9]+ [0-9]+$' |
			sort -k1,1nr | awk 'NR == 1 { top = $1 } $1 == top { print $2, $3 }' |
			sort | uniq -c | sort -rn | awk 'NR == 1 { print $2, $3 }' >"$dir/answer"
		# A sentinel that moved to a new epoch while asked is mid-failover:
		# ask again rather than follow those that have not heard of it yet.
		[ -s "$dir/answer" ] && ! cat "$dir"/*.why 2>/dev/null | grep -q "went from" && break
	done
	[ -f "$dir/log" ] && cat "$dir/log" >&2
	cat "$dir/answer"
	rm -rf "$dir"
}

answer=$(ask_master)
if [ -n "$answer" ]; then
	master_ip=${answer% *}
	master_port=${answer#* }
	echo "redis-ha: the sentinels name $master_ip:$master_port as master" >&2
else
	master_ip=$FIRST_MASTER
	master_port=6379
	echo "redis-ha: no sentinel answered; $master_ip:$master_port is the master" >&2
fi

case $role in
data)
	if [ "$master_ip:$master_port" = "$NODE_IP:$NODE_PORT" ]; then
		echo "redis-ha: starting $NODE_IP as the master" >&2
	else
		echo "redis-ha: starting $NODE_IP as a replica of $master_ip:$master_port" >&2
		set -- --replicaof "$master_ip" "$master_port" "$@"
	fi
	exec docker-entrypoint.sh redis-server "$@" --replica-announce-ip "$NODE_IP"
	;;
sentinel)
	conf=${SENTINEL_CONF:-/tmp/sentinel.conf}
	# The sentinel rewrites this file (epochs, known nodes), so it must be
	# writable by the user the entrypoint drops to.
	cat >"$conf" <<EOF
sentinel resolve-hostnames no
sentinel announce-hostnames no
sentinel announce-ip $NODE_IP
sentinel monitor $MASTER_NAME $master_ip $master_port $QUORUM
sentinel down-after-milliseconds $MASTER_NAME $DOWN_AFTER_MS
sentinel failover-timeout $MASTER_NAME $FAILOVER_TIMEOUT_MS
sentinel parallel-syncs $MASTER_NAME 1
EOF
	[ "$(id -u)" = 0 ] && chown redis "$conf"
	exec docker-entrypoint.sh redis-server "$conf" --sentinel
	;;
*)
	echo "redis-ha: unknown role $role; want data or sentinel" >&2
	exit 2
	;;
esac
