#!/bin/sh
# Writes the two secrets docker-compose.yml mounts, as files:
#
#   secrets/telegram_bot_token   the bot token from @BotFather (workers only)
#   secrets/herald_api_token     the API token clients send (producer only),
#                                generated: 32 random bytes in hex
#
# Usage: deploy/init-secrets.sh [DIR]   (DIR defaults to ./secrets)
#
# The bot token is read from $TELEGRAM_BOT_TOKEN, or asked for on the
# terminal. Existing non-empty files are kept, so running it again is safe;
# delete a file to replace it.
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

api="$dir/herald_api_token"
if [ ! -s "$api" ]; then
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$api"
	echo >>"$api"
	echo "init-secrets: wrote $api (clients send it as \"Authorization: Bearer <token>\")" >&2
fi

chmod 644 "$bot" "$api"
