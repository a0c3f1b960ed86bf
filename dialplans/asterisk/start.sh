#!/bin/sh
# Entry point of the bundled Asterisk container: writes the softphones' credentials (the caller's and the
# reception's, which defaults to the caller's password) and the NAT
# addresses from the environment into ASTERISK_ETC (default /etc/asterisk), then runs the given
# command (Asterisk). Nothing secret is kept in the repository.
set -eu
etc="${ASTERISK_ETC:-/etc/asterisk}"
user="${SOFTPHONE_USER:-6001}"
reception="${RECEPTION_USER:-6002}"
if [ -z "${SOFTPHONE_PASSWORD:-}" ]; then
    echo "start.sh: set SOFTPHONE_PASSWORD (the softphone's SIP password) in the environment" >&2
    exit 2
fi
case "$SOFTPHONE_PASSWORD" in
    *"
"*) echo "start.sh: SOFTPHONE_PASSWORD must be one line" >&2; exit 2 ;;
esac
# ';' starts a comment in Asterisk's configuration files: escape it.
password=$(printf '%s' "$SOFTPHONE_PASSWORD" | sed 's/;/\\;/g')
reception_password=$(printf '%s' "${RECEPTION_PASSWORD:-$SOFTPHONE_PASSWORD}" | sed 's/;/\\;/g')
case "$reception_password" in
    *"
"*) echo "start.sh: RECEPTION_PASSWORD must be one line" >&2; exit 2 ;;
esac
umask 077
printf '[%s-auth]\ntype=auth\nauth_type=userpass\nusername=%s\npassword=%s\n\n' \
    "$user" "$user" "$password" > "$etc/pjsip_softphone_auth.conf"
printf '[%s-auth]\ntype=auth\nauth_type=userpass\nusername=%s\npassword=%s\n' \
    "$reception" "$reception" "$reception_password" >> "$etc/pjsip_softphone_auth.conf"
chown asterisk: "$etc/pjsip_softphone_auth.conf" 2>/dev/null || true
umask 022
# The trunk to the agent: TLS + SRTP (`agent`, the default) or plain UDP (`agent-udp`, behind Kamailio).
trunk="${AGENT_TRUNK:-agent}"
case "$trunk" in
    agent|agent-udp) ;;
    *) echo "start.sh: AGENT_TRUNK must be agent or agent-udp, not '$trunk'" >&2; exit 2 ;;
esac
record="${RECORD_CALLS:-no}"
case "$record" in
    yes|no) ;;
    *) echo "start.sh: RECORD_CALLS must be yes or no, not '$record'" >&2; exit 2 ;;
esac
printf '[globals]\nAGENT_TRUNK=%s\nRECORD_CALLS=%s\n' "$trunk" "$record" > "$etc/extensions_trunk.conf"
# TLS (pjsip.conf's transport-tls): Asterisk's certificate and key, and the agent's certificate it trusts, from
# the tls-cert service's volume; the key is made readable by Asterisk alone.
tls="${TLS_DIR:-/opt/tls}"
for file in asterisk.crt asterisk.key agent.crt; do
    if [ ! -f "$tls/$file" ]; then
        echo "start.sh: $tls/$file is missing (the compose tls-cert service makes it)" >&2
        exit 2
    fi
done
mkdir -p "$etc/keys"
cp "$tls/asterisk.crt" "$tls/asterisk.key" "$tls/agent.crt" "$etc/keys/"
chown -R asterisk: "$etc/keys" 2>/dev/null || true
chmod 600 "$etc/keys/asterisk.key"
if [ -n "${EXTERNAL_ADDRESS:-}" ]; then
    printf 'local_net=%s\nexternal_media_address=%s\nexternal_signaling_address=%s\n' \
        "${LOCAL_NET:-172.28.0.0/24}" "$EXTERNAL_ADDRESS" "$EXTERNAL_ADDRESS" > "$etc/pjsip_nat.conf"
else
    echo "; EXTERNAL_ADDRESS unset: no NAT rewriting" > "$etc/pjsip_nat.conf"
fi
exec "$@"
