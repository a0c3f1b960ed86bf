/* The agent's pjproject build (agent/sip/pjproject/build.py copies this to pjlib/include/pj/config_site.h).
 * Sized together: every call holds a SIP dialog, an RTP and an RTCP socket and two conference ports (the
 * call's stream and the agent's own audio port); INVITEs being refused hold sockets for half a second more. */

/* Calls one process can hold; the agent's AGENT_MAX_CALLS is checked against it at start-up. */
#define PJSUA_MAX_CALLS                 64

/* Sockets the I/O queue (epoll, chosen by configure --enable-epoll) watches: 2 per call slot, the SIP
 * transports, and room for a flood of refused INVITEs (agent/sip/admission.py budgets them). */
#define PJ_IOQUEUE_MAX_HANDLES          1024

/* Conference ports: two per call, a few players, the null sound device. */
#define PJSUA_MAX_PLAYERS               16
#define PJSUA_MAX_RECORDERS             16
#define PJSUA_MAX_CONF_PORTS            (2 * PJSUA_MAX_CALLS + PJSUA_MAX_PLAYERS + PJSUA_MAX_RECORDERS + 8)

/* Audio only. */
#define PJMEDIA_HAS_VIDEO               0
