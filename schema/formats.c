/*
 * The `format` vocabulary as regular languages: each format of the
 * specification's list is an ECMA-262 regex matched against the whole
 * string (note [formats]).
 *
 * note [formats]
 * The regexes follow the RFCs the specification cites: date, time and
 * date-time are RFC 3339 (month lengths and leap years exact; a leap second
 * :60 only where the time is 23:59 UTC, except that with an offset of a
 * fractional hour its minute is not checked); duration is RFC 3339
 * appendix A; email is RFC 5321's Mailbox (dot-atom or quoted local part,
 * host name or address literal); hostname is RFC 1123 labels of at most 63
 * characters (the 253-character total is not counted, and an A-label
 * "xn--..." is not decoded to check its Punycode); ipv4 is dotted decimal
 * without leading zeros; ipv6 is RFC 4291 text (with an embedded ipv4, no zone);
 * uri, uri-reference, iri, iri-reference are RFC 3986 / 3987; uri-template RFC
 * 6570 level 4; json-pointer RFC 6901; relative-json-pointer its draft; uuid
 * RFC 4122's 8-4-4-4-12 hex. `regex` (not a regular language) and the idn-*
 * formats (IDNA tables) are approximated: relaxations in lenient mode, errors
 * otherwise. Unknown formats are annotations (a warning), as the specification
 * says.
 */
#include <string.h>

#include "schema/formats.h"

#define DIGIT "[0-9]"
#define HEX "[0-9a-fA-F]"
#define LEAPYEAR "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
#define DATE                                                                                     \
    "(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)" \
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))|" LEAPYEAR "-02-29)"
#define HH "(?:[01][0-9]|2[0-3])"
#define MM "[0-5][0-9]"
#define FRAC "(?:\\.[0-9]+)?"
#define OFFSET "(?:[Zz]|[+-]" HH ":" MM ")"
/* leap seconds: 23:59:60 UTC. At a whole-hour offset the local time is HH:59:60 with HH the
   offset's image of 23; at a fractional one (OM minutes) the hour is exact (+OH:OM: HH = OH,
   -OH:OM: HH = 23 - OH) but the minute is not checked (it is OM - 1 or 59 - OM: pairing the
   two would take 24 x 59 alternatives in every date-time grammar) */
#define LEAP_PLUS \
    "(?:00:59:60" FRAC "\\+01:00|01:59:60" FRAC "\\+02:00|02:59:60" FRAC "\\+03:00|" \
    "03:59:60" FRAC "\\+04:00|04:59:60" FRAC "\\+05:00|05:59:60" FRAC "\\+06:00|" \
    "06:59:60" FRAC "\\+07:00|07:59:60" FRAC "\\+08:00|08:59:60" FRAC "\\+09:00|" \
    "09:59:60" FRAC "\\+10:00|10:59:60" FRAC "\\+11:00|11:59:60" FRAC "\\+12:00|" \
    "12:59:60" FRAC "\\+13:00|13:59:60" FRAC "\\+14:00|14:59:60" FRAC "\\+15:00|" \
    "15:59:60" FRAC "\\+16:00|16:59:60" FRAC "\\+17:00|17:59:60" FRAC "\\+18:00|" \
    "18:59:60" FRAC "\\+19:00|19:59:60" FRAC "\\+20:00|20:59:60" FRAC "\\+21:00|" \
    "21:59:60" FRAC "\\+22:00|22:59:60" FRAC "\\+23:00)"
#define LEAP_MINUS \
    "(?:22:59:60" FRAC "-01:00|21:59:60" FRAC "-02:00|20:59:60" FRAC "-03:00|" \
    "19:59:60" FRAC "-04:00|18:59:60" FRAC "-05:00|17:59:60" FRAC "-06:00|" \
    "16:59:60" FRAC "-07:00|15:59:60" FRAC "-08:00|14:59:60" FRAC "-09:00|" \
    "13:59:60" FRAC "-10:00|12:59:60" FRAC "-11:00|11:59:60" FRAC "-12:00|" \
    "10:59:60" FRAC "-13:00|09:59:60" FRAC "-14:00|08:59:60" FRAC "-15:00|" \
    "07:59:60" FRAC "-16:00|06:59:60" FRAC "-17:00|05:59:60" FRAC "-18:00|" \
    "04:59:60" FRAC "-19:00|03:59:60" FRAC "-20:00|02:59:60" FRAC "-21:00|" \
    "01:59:60" FRAC "-22:00|00:59:60" FRAC "-23:00)"
#define LEAP_FRAC_PLUS \
    "(?:(?:00:" MM ":60" FRAC "\\+00:|01:" MM ":60" FRAC "\\+01:|02:" MM ":60" FRAC "\\+02:|" \
    "03:" MM ":60" FRAC "\\+03:|04:" MM ":60" FRAC "\\+04:|05:" MM ":60" FRAC "\\+05:|" \
    "06:" MM ":60" FRAC "\\+06:|07:" MM ":60" FRAC "\\+07:|08:" MM ":60" FRAC "\\+08:|" \
    "09:" MM ":60" FRAC "\\+09:|10:" MM ":60" FRAC "\\+10:|11:" MM ":60" FRAC "\\+11:|" \
    "12:" MM ":60" FRAC "\\+12:|13:" MM ":60" FRAC "\\+13:|14:" MM ":60" FRAC "\\+14:|" \
    "15:" MM ":60" FRAC "\\+15:|16:" MM ":60" FRAC "\\+16:|17:" MM ":60" FRAC "\\+17:|" \
    "18:" MM ":60" FRAC "\\+18:|19:" MM ":60" FRAC "\\+19:|20:" MM ":60" FRAC "\\+20:|" \
    "21:" MM ":60" FRAC "\\+21:|22:" MM ":60" FRAC "\\+22:|" \
    "23:" MM ":60" FRAC "\\+23:)(?:0[1-9]|[1-5][0-9]))"
#define LEAP_FRAC_MINUS \
    "(?:(?:23:" MM ":60" FRAC "-00:|22:" MM ":60" FRAC "-01:|21:" MM ":60" FRAC "-02:|" \
    "20:" MM ":60" FRAC "-03:|19:" MM ":60" FRAC "-04:|18:" MM ":60" FRAC "-05:|" \
    "17:" MM ":60" FRAC "-06:|16:" MM ":60" FRAC "-07:|15:" MM ":60" FRAC "-08:|" \
    "14:" MM ":60" FRAC "-09:|13:" MM ":60" FRAC "-10:|12:" MM ":60" FRAC "-11:|" \
    "11:" MM ":60" FRAC "-12:|10:" MM ":60" FRAC "-13:|09:" MM ":60" FRAC "-14:|" \
    "08:" MM ":60" FRAC "-15:|07:" MM ":60" FRAC "-16:|06:" MM ":60" FRAC "-17:|" \
    "05:" MM ":60" FRAC "-18:|04:" MM ":60" FRAC "-19:|03:" MM ":60" FRAC "-20:|" \
    "02:" MM ":60" FRAC "-21:|01:" MM ":60" FRAC "-22:|" \
    "00:" MM ":60" FRAC "-23:)(?:0[1-9]|[1-5][0-9]))"
#define LEAP_FRAC "(?:" LEAP_FRAC_PLUS "|" LEAP_FRAC_MINUS ")"
#define TIME                                                                                     \
    "(?:" HH ":" MM ":[0-5][0-9]" FRAC OFFSET "|23:59:60" FRAC "(?:[Zz]|[+-]00:00)|"             \
    "(?:" LEAP_PLUS "|" LEAP_MINUS ")" "|" LEAP_FRAC ")"

#define DUR_SECOND DIGIT "+S"
#define DUR_MINUTE DIGIT "+M(?:" DUR_SECOND ")?"
#define DUR_HOUR DIGIT "+H(?:" DUR_MINUTE ")?"
#define DUR_TIME "T(?:" DUR_HOUR "|" DUR_MINUTE "|" DUR_SECOND ")"
#define DUR_DAY DIGIT "+D"
#define DUR_MONTH DIGIT "+M(?:" DUR_DAY ")?"
#define DUR_YEAR DIGIT "+Y(?:" DUR_MONTH ")?"
#define DUR_DATE "(?:" DUR_DAY "|" DUR_MONTH "|" DUR_YEAR ")(?:" DUR_TIME ")?"
#define DURATION "P(?:" DUR_DATE "|" DUR_TIME "|" DIGIT "+W)"

#define OCTET "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
#define IPV4 OCTET "\\." OCTET "\\." OCTET "\\." OCTET
#define H16 HEX "{1,4}"
#define LS32 "(?:" H16 ":" H16 "|" IPV4 ")"
#define IPV6                                                                                     \
    "(?:(?:" H16 ":){6}" LS32 "|::(?:" H16 ":){5}" LS32 "|(?:" H16 ")?::(?:" H16 ":){4}" LS32     \
    "|(?:(?:" H16 ":){0,1}" H16 ")?::(?:" H16 ":){3}" LS32 "|(?:(?:" H16 ":){0,2}" H16           \
    ")?::(?:" H16 ":){2}" LS32 "|(?:(?:" H16 ":){0,3}" H16 ")?::" H16 ":" LS32                  \
    "|(?:(?:" H16 ":){0,4}" H16 ")?::" LS32 "|(?:(?:" H16 ":){0,5}" H16 ")?::" H16              \
    "|(?:(?:" H16 ":){0,6}" H16 ")?::)"

#define LABEL "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
#define HOSTNAME LABEL "(?:\\." LABEL ")*"

#define ATEXT "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
#define EMAIL_LOCAL "(?:" ATEXT "+(?:\\." ATEXT "+)*|\"(?:[ !#-\\[\\]-~]|\\\\[ -~])*\")"
#define EMAIL EMAIL_LOCAL "@(?:" HOSTNAME "|\\[" IPV4 "\\]|\\[IPv6:" IPV6 "\\])"

/* RFC 3986 (URI) and, with UCS, RFC 3987 (IRI) */
#define PCT "%" HEX HEX
#define SUB "!$&'()*+,;="
#define UNRES_A "A-Za-z0-9._~\\-"
#define UCS "\\u00A0-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFEF\\u{10000}-\\u{EFFFD}"
#define PRIV "\\uE000-\\uF8FF\\u{F0000}-\\u{FFFFD}\\u{100000}-\\u{10FFFD}"
#define SCHEME "[A-Za-z][A-Za-z0-9+.-]*"
#define PCHAR(U) "(?:[" UNRES_A SUB ":@" U "]|" PCT ")"
#define SEGMENT(U) PCHAR(U) "*"
#define SEGMENT_NZ(U) PCHAR(U) "+"
#define SEGMENT_NZ_NC(U) "(?:[" UNRES_A SUB "@" U "]|" PCT ")+"
#define IPVFUTURE "[vV]" HEX "+\\.[" UNRES_A SUB ":]+"
#define HOST(U) "(?:\\[(?:" IPV6 "|" IPVFUTURE ")\\]|" IPV4 "|(?:[" UNRES_A SUB U "]|" PCT ")*)"
#define AUTHORITY(U) "(?:(?:[" UNRES_A SUB ":" U "]|" PCT ")*@)?" HOST(U) "(?::[0-9]*)?"
#define PATH_ABEMPTY(U) "(?:/" SEGMENT(U) ")*"
#define PATH_ABSOLUTE(U) "/(?:" SEGMENT_NZ(U) "(?:/" SEGMENT(U) ")*)?"
#define PATH_ROOTLESS(U) SEGMENT_NZ(U) "(?:/" SEGMENT(U) ")*"
#define PATH_NOSCHEME(U) SEGMENT_NZ_NC(U) "(?:/" SEGMENT(U) ")*"
#define QUERY(U, P) "(?:\\?(?:" PCHAR(U) "|[/?" P "])*)?"
#define FRAGMENT(U) "(?:#(?:" PCHAR(U) "|[/?])*)?"
#define HIER(U) "(?://" AUTHORITY(U) PATH_ABEMPTY(U) "|" PATH_ABSOLUTE(U) "|" PATH_ROOTLESS(U) "|)"
#define RELPART(U) "(?://" AUTHORITY(U) PATH_ABEMPTY(U) "|" PATH_ABSOLUTE(U) "|" PATH_NOSCHEME(U) "|)"
#define ABSURI(U, P) SCHEME ":" HIER(U) QUERY(U, P) FRAGMENT(U)
#define RELREF(U, P) RELPART(U) QUERY(U, P) FRAGMENT(U)

/* RFC 6570 literals, with the apostrophe of its errata */
#define URI_TEMPLATE_LITERAL "(?:[!#$&'(-;=?-\\[\\]_a-z~" UCS PRIV "]|" PCT ")"
#define VARCHAR "(?:[A-Za-z0-9_]|" PCT ")"
#define VARNAME VARCHAR "(?:\\.?" VARCHAR ")*"
#define VARSPEC VARNAME "(?::[1-9][0-9]{0,3}|\\*)?"
#define URI_TEMPLATE                                                                             \
    "(?:" URI_TEMPLATE_LITERAL "|\\{[+#./;?&=,!@|]?" VARSPEC "(?:," VARSPEC ")*\\})*"

#define JSON_POINTER "(?:/(?:[^~/]|~[01])*)*"
#define REL_JSON_POINTER "(?:0|[1-9][0-9]*)(?:#|" JSON_POINTER ")"
#define UUID HEX "{8}-" HEX "{4}-" HEX "{4}-" HEX "{4}-" HEX "{12}"

/* Unicode labels for the idn-* approximations: letters, marks, digits, '-' */
#define ULABEL "[\\p{L}\\p{M}\\p{Nd}](?:[\\p{L}\\p{M}\\p{Nd}-]{0,61}[\\p{L}\\p{M}\\p{Nd}])?"
#define UHOSTNAME ULABEL "(?:[.\\u3002\\uFF0E\\uFF61]" ULABEL ")*"

static const sc_format formats[] = {
    {"date-time", DATE "[Tt]" TIME, false},
    {"date", DATE, false},
    {"time", TIME, false},
    {"duration", DURATION, false},
    {"email", EMAIL, false},
    {"idn-email", "[^@\\s]+@" UHOSTNAME, true},
    {"hostname", HOSTNAME, false},
    {"host-name", HOSTNAME, false},
    {"idn-hostname", UHOSTNAME, true},
    {"ipv4", IPV4, false},
    {"ip-address", IPV4, false},
    {"ipv6", IPV6, false},
    {"uri", ABSURI("", ""), false},
    {"uri-reference", "(?:" ABSURI("", "") "|" RELREF("", "") ")", false},
    {"iri", ABSURI(UCS, PRIV), false},
    {"iri-reference", "(?:" ABSURI(UCS, PRIV) "|" RELREF(UCS, PRIV) ")", false},
    {"uri-template", URI_TEMPLATE, false},
    {"json-pointer", JSON_POINTER, false},
    {"relative-json-pointer", REL_JSON_POINTER, false},
    {"uuid", UUID, false},
    {"regex", "[^]*", true},
};

const sc_format *sc_format_find(const char *name)
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (!strcmp(formats[i].name, name))
            return &formats[i];
    return NULL;
}
