#!/bin/sh
# Accounts on a Mosquitto broker with the Dynamic Security plugin, with the topics of
# docs/devices.md and nothing else: the service's own, and one per device, signed in with the key
# provisioned in storeops. Each command may be run again: it ends with the account as asked (a
# changed key replaces the old one).
#
#   storeops-dynsec.sh service <username> <password>   the user and password of MQTT_URL
#   storeops-dynsec.sh locker <locker_id> <api_key>     lockers[].api_key of the provisioning file
#   storeops-dynsec.sh edge <edge_id> <device_key>      radio_edges[].device_key
#   storeops-dynsec.sh remove locker|edge <id>
#
# It signs in as the plugin's admin: DYNSEC_ADMIN_PASSWORD, DYNSEC_ADMIN_USER (admin),
# BROKER_HOST (localhost), BROKER_PORT (1883). Run one at a time: the plugin answers every admin
# connection on one topic, so two runs at once read each other's answers.
set -eu

existed=no
ctrl() {
  # mosquitto_ctrl exits 0 even when the broker refuses a command, so its answer decides.
  out=$(mosquitto_ctrl -h "${BROKER_HOST:-localhost}" -p "${BROKER_PORT:-1883}" \
    -u "${DYNSEC_ADMIN_USER:-admin}" -P "$DYNSEC_ADMIN_PASSWORD" dynsec "$@" 2>&1) || {
    echo "$out" >&2
    exit 1
  }
  existed=no
  case "$out" in
    *'already exists'*) existed=yes ;;
    *rror*) printf 'dynsec %s %s:\n%s\n' "$1" "$2" "$out" | grep -v -e 'encryption' -e 'visible on the network' -e '^$' >&2; exit 1 ;;
  esac
}

# A client whose role is its own: the role is named after the username.
account() {
  ctrl createClient "$1" -p "$2"
  # Already there: the key may have changed. Setting it disconnects the client, so only then.
  if [ "$existed" = yes ]; then ctrl setClientPassword "$1" "$2"; fi
  ctrl createRole "$1"
  # Adding a role the client already has is an error ("Internal error"), so look first.
  ctrl getClient "$1"
  case "$out" in *" $1 (priority"*) ;; *) ctrl addClientRole "$1" "$1" ;; esac
}

allow() { ctrl addRoleACL "$role" "$1" "$2" allow; }

# The ids storeops accepts (src/devices/wire.ts): an id with + or # would open other devices' topics.
id() {
  case "$1" in locker) re='^[1-9][0-9]{0,9}$' ;; *) re='^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' ;; esac
  # grep matches line by line: an id with a line break in it is refused first.
  if [ "$(printf '%s' "$2" | wc -l)" -ne 0 ] || ! printf '%s' "$2" | grep -Eqx "$re"; then
    echo "not a $1 id: $2" >&2
    exit 2
  fi
}

case "${1:-} ${2:+x} ${3:+x}" in
  'service x x')
    # A client receives only what a role allows it (a device taking over another's client id and
    # its session must not get its messages): the plugin's default lets every client receive.
    # mosquitto_ctrl 2.0.11's setDefaultACLAccess answers success and changes nothing, so the
    # plugin's own command is sent, and the result read back.
    mosquitto_pub -h "${BROKER_HOST:-localhost}" -p "${BROKER_PORT:-1883}" -u "${DYNSEC_ADMIN_USER:-admin}" \
      -P "$DYNSEC_ADMIN_PASSWORD" -q 1 -t '$CONTROL/dynamic-security/v1' \
      -m '{"commands":[{"command":"setDefaultACLAccess","acls":[{"acltype":"publishClientReceive","allow":false}]}]}'
    ctrl getDefaultACLAccess
    case "$out" in *'publishClientReceive : deny'*) ;; *) echo "the default is still: $out" >&2; exit 1 ;; esac
    account "$2" "$3"; role=$2
    allow publishClientSend 'lockers/+/commands'
    allow publishClientSend 'radio/+/play'
    for t in 'lockers/+/acks' 'radio/+/played' 'radio/+/heard'; do
      allow subscribePattern "$t"
      allow publishClientReceive "$t"
    done ;;
  'locker x x')
    id locker "$2"
    account "locker:$2" "$3"; role="locker:$2"
    allow subscribeLiteral "lockers/$2/commands"
    allow publishClientReceive "lockers/$2/commands"
    allow publishClientSend "lockers/$2/acks" ;;
  'edge x x')
    id edge "$2"
    account "edge:$2" "$3"; role="edge:$2"
    allow subscribeLiteral "radio/$2/play"
    allow publishClientReceive "radio/$2/play"
    allow publishClientSend "radio/$2/played"
    allow publishClientSend "radio/$2/heard" ;;
  'remove x x')
    case "$2" in locker|edge) id "$2" "$3" ;; *) echo "remove: locker or edge, got $2" >&2; exit 2 ;; esac
    ctrl deleteClient "$2:$3"
    ctrl deleteRole "$2:$3" ;;
  *)
    sed -n '7,10s/^# *//p' "$0" >&2
    exit 2 ;;
esac
