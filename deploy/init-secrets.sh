#!/bin/sh
# Writes the three secrets docker-compose.yml mounts, as files:
#
#   secrets/telegram_bot_token   the bot token from @BotFather (workers only)
#   secrets/herald_api_token     the API token senders use (producer only;
#                                token "api", scope send), generated:
#                                32 random bytes in hex
#   secrets/herald_admin_token   the admin token (producer only; token
#                                "admin", every scope: silences and the web
#                                UI's changes), generated the same way
#
# Usage: deploy/init-secrets.sh [DIR]   (DIR defaults to ./secrets)
#
# The bot token is read from $TELEGRAM_BOT_TOKEN, or asked for on the
# terminal. Existing non-empty files are kept, so running it again is safe;
# delete a file to replace it. An install set up before the admin token
# existed gets it by running this again: the other two files stay as they are.
#
# Modes: DIR is 0700, so other users of this host cannot read the tokens;
# each file is 0644, because compose bind-mounts the file itself (with its
# host owner and mode) at /run/secrets/<name>, where Herald runs as uid 65532
# and must be able to read it. A 0600 file owned by you is unreadable there,
# and `docker compose up` stops at the check with "permission denied".
set -eu

dir=${1:-secrets}
umask 077
mkdir -p "$dir"
chmod 700 "$dir"

bot="$dir/telegram_bot_token"
if [ ! -s "$bot" ]; then
	token=${TELEGRAM_BOT_TOKEN:-}
	if [ -z "$token" ]; then
		if [ ! -t 0 ]; then
			echo "init-secrets: set TELEGRAM_BOT_TOKEN, or run this on a terminal to be asked for it" >&2
			exit 2
		fi
		printf 'Bot token from @BotFather (not shown): ' >&2
		stty -echo
		trap 'stty echo' EXIT
		read -r token
		stty echo
		trap - EXIT
		echo >&2
	fi
	if [ -z "$token" ]; then
		echo "init-secrets: no bot token given" >&2
		exit 2
	fi
	printf '%s\n' "$token" >"$bot"
	echo "init-secrets: wrote $bot" >&2
fi

# random_token FILE writes 32 random bytes, in hex, to FILE.
random_token() {
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$1"
	echo >>"$1"
}

api="$dir/herald_api_token"
if [ ! -s "$api" ]; then
	random_token "$api"
	echo "init-secrets: wrote $api (for senders: they send it as \"Authorization: Bearer <token>\"; it may send messages and alerts, and read the web UI)" >&2
fi

admin="$dir/herald_admin_token"
if [ ! -s "$admin" ]; then
	random_token "$admin"
	echo "init-secrets: wrote $admin (for operators, not senders: silences (POST/GET/DELETE /v1/silences) and the web UI's changes; the web UI's password)" >&2
fi

chmod 644 "$bot" "$api" "$admin"
