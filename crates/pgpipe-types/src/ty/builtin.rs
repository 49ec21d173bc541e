//! The built-in types of PostgreSQL, known without asking the server.
//!
//! Generated from the `pg_catalog` types of a PostgreSQL 15 server (base,
//! range, multirange and the useful pseudo-types, each with its array type):
//!
//! ```sql
//! SELECT t.oid, t.typname, t.typarray, t.typtype,
//!        coalesce(r.rngsubtype, 0), coalesce(m.rngtypid, 0)
//! FROM pg_type t
//! LEFT JOIN pg_range r ON r.rngtypid = t.oid
//! LEFT JOIN pg_range m ON m.rngmultitypid = t.oid
//! WHERE t.typnamespace = 'pg_catalog'::regnamespace AND t.oid < 10000
//!   AND t.typname NOT LIKE '\_%' ORDER BY t.oid;
//! ```
//!
//! Built-in OIDs are fixed across PostgreSQL versions, so this table is
//! valid for every server; types newer than a server simply never appear.

use super::{Builtin, Kind, Type};
use crate::Oid;

builtin_types! {
    /// `bool`
    BOOL = 16, "bool", Kind::Simple, 1000;
    /// `bool[]`
    BOOL_ARRAY = 1000, "bool[]", Kind::Array(Type::BOOL), 0;
    /// `bytea`
    BYTEA = 17, "bytea", Kind::Simple, 1001;
    /// `bytea[]`
    BYTEA_ARRAY = 1001, "bytea[]", Kind::Array(Type::BYTEA), 0;
    /// `"char"`
    CHAR = 18, "char", Kind::Simple, 1002;
    /// `"char"[]`
    CHAR_ARRAY = 1002, "char[]", Kind::Array(Type::CHAR), 0;
    /// `name`
    NAME = 19, "name", Kind::Simple, 1003;
    /// `name[]`
    NAME_ARRAY = 1003, "name[]", Kind::Array(Type::NAME), 0;
    /// `int8`
    INT8 = 20, "int8", Kind::Simple, 1016;
    /// `int8[]`
    INT8_ARRAY = 1016, "int8[]", Kind::Array(Type::INT8), 0;
    /// `int2`
    INT2 = 21, "int2", Kind::Simple, 1005;
    /// `int2[]`
    INT2_ARRAY = 1005, "int2[]", Kind::Array(Type::INT2), 0;
    /// `int2vector`
    INT2VECTOR = 22, "int2vector", Kind::Simple, 1006;
    /// `int2vector[]`
    INT2VECTOR_ARRAY = 1006, "int2vector[]", Kind::Array(Type::INT2VECTOR), 0;
    /// `int4`
    INT4 = 23, "int4", Kind::Simple, 1007;
    /// `int4[]`
    INT4_ARRAY = 1007, "int4[]", Kind::Array(Type::INT4), 0;
    /// `regproc`
    REGPROC = 24, "regproc", Kind::Simple, 1008;
    /// `regproc[]`
    REGPROC_ARRAY = 1008, "regproc[]", Kind::Array(Type::REGPROC), 0;
    /// `text`
    TEXT = 25, "text", Kind::Simple, 1009;
    /// `text[]`
    TEXT_ARRAY = 1009, "text[]", Kind::Array(Type::TEXT), 0;
    /// `oid`
    OID = 26, "oid", Kind::Simple, 1028;
    /// `oid[]`
    OID_ARRAY = 1028, "oid[]", Kind::Array(Type::OID), 0;
    /// `tid`
    TID = 27, "tid", Kind::Simple, 1010;
    /// `tid[]`
    TID_ARRAY = 1010, "tid[]", Kind::Array(Type::TID), 0;
    /// `xid`
    XID = 28, "xid", Kind::Simple, 1011;
    /// `xid[]`
    XID_ARRAY = 1011, "xid[]", Kind::Array(Type::XID), 0;
    /// `cid`
    CID = 29, "cid", Kind::Simple, 1012;
    /// `cid[]`
    CID_ARRAY = 1012, "cid[]", Kind::Array(Type::CID), 0;
    /// `oidvector`
    OIDVECTOR = 30, "oidvector", Kind::Simple, 1013;
    /// `oidvector[]`
    OIDVECTOR_ARRAY = 1013, "oidvector[]", Kind::Array(Type::OIDVECTOR), 0;
    /// `json`
    JSON = 114, "json", Kind::Simple, 199;
    /// `json[]`
    JSON_ARRAY = 199, "json[]", Kind::Array(Type::JSON), 0;
    /// `xml`
    XML = 142, "xml", Kind::Simple, 143;
    /// `xml[]`
    XML_ARRAY = 143, "xml[]", Kind::Array(Type::XML), 0;
    /// `point`
    POINT = 600, "point", Kind::Simple, 1017;
    /// `point[]`
    POINT_ARRAY = 1017, "point[]", Kind::Array(Type::POINT), 0;
    /// `lseg`
    LSEG = 601, "lseg", Kind::Simple, 1018;
    /// `lseg[]`
    LSEG_ARRAY = 1018, "lseg[]", Kind::Array(Type::LSEG), 0;
    /// `path`
    PATH = 602, "path", Kind::Simple, 1019;
    /// `path[]`
    PATH_ARRAY = 1019, "path[]", Kind::Array(Type::PATH), 0;
    /// `box`
    BOX = 603, "box", Kind::Simple, 1020;
    /// `box[]`
    BOX_ARRAY = 1020, "box[]", Kind::Array(Type::BOX), 0;
    /// `polygon`
    POLYGON = 604, "polygon", Kind::Simple, 1027;
    /// `polygon[]`
    POLYGON_ARRAY = 1027, "polygon[]", Kind::Array(Type::POLYGON), 0;
    /// `line`
    LINE = 628, "line", Kind::Simple, 629;
    /// `line[]`
    LINE_ARRAY = 629, "line[]", Kind::Array(Type::LINE), 0;
    /// `cidr`
    CIDR = 650, "cidr", Kind::Simple, 651;
    /// `cidr[]`
    CIDR_ARRAY = 651, "cidr[]", Kind::Array(Type::CIDR), 0;
    /// `float4`
    FLOAT4 = 700, "float4", Kind::Simple, 1021;
    /// `float4[]`
    FLOAT4_ARRAY = 1021, "float4[]", Kind::Array(Type::FLOAT4), 0;
    /// `float8`
    FLOAT8 = 701, "float8", Kind::Simple, 1022;
    /// `float8[]`
    FLOAT8_ARRAY = 1022, "float8[]", Kind::Array(Type::FLOAT8), 0;
    /// `unknown`
    UNKNOWN = 705, "unknown", Kind::Pseudo, 0;
    /// `circle`
    CIRCLE = 718, "circle", Kind::Simple, 719;
    /// `circle[]`
    CIRCLE_ARRAY = 719, "circle[]", Kind::Array(Type::CIRCLE), 0;
    /// `macaddr8`
    MACADDR8 = 774, "macaddr8", Kind::Simple, 775;
    /// `macaddr8[]`
    MACADDR8_ARRAY = 775, "macaddr8[]", Kind::Array(Type::MACADDR8), 0;
    /// `money`
    MONEY = 790, "money", Kind::Simple, 791;
    /// `money[]`
    MONEY_ARRAY = 791, "money[]", Kind::Array(Type::MONEY), 0;
    /// `macaddr`
    MACADDR = 829, "macaddr", Kind::Simple, 1040;
    /// `macaddr[]`
    MACADDR_ARRAY = 1040, "macaddr[]", Kind::Array(Type::MACADDR), 0;
    /// `inet`
    INET = 869, "inet", Kind::Simple, 1041;
    /// `inet[]`
    INET_ARRAY = 1041, "inet[]", Kind::Array(Type::INET), 0;
    /// `aclitem`
    ACLITEM = 1033, "aclitem", Kind::Simple, 1034;
    /// `aclitem[]`
    ACLITEM_ARRAY = 1034, "aclitem[]", Kind::Array(Type::ACLITEM), 0;
    /// `bpchar`
    BPCHAR = 1042, "bpchar", Kind::Simple, 1014;
    /// `bpchar[]`
    BPCHAR_ARRAY = 1014, "bpchar[]", Kind::Array(Type::BPCHAR), 0;
    /// `varchar`
    VARCHAR = 1043, "varchar", Kind::Simple, 1015;
    /// `varchar[]`
    VARCHAR_ARRAY = 1015, "varchar[]", Kind::Array(Type::VARCHAR), 0;
    /// `date`
    DATE = 1082, "date", Kind::Simple, 1182;
    /// `date[]`
    DATE_ARRAY = 1182, "date[]", Kind::Array(Type::DATE), 0;
    /// `time`
    TIME = 1083, "time", Kind::Simple, 1183;
    /// `time[]`
    TIME_ARRAY = 1183, "time[]", Kind::Array(Type::TIME), 0;
    /// `timestamp`
    TIMESTAMP = 1114, "timestamp", Kind::Simple, 1115;
    /// `timestamp[]`
    TIMESTAMP_ARRAY = 1115, "timestamp[]", Kind::Array(Type::TIMESTAMP), 0;
    /// `timestamptz`
    TIMESTAMPTZ = 1184, "timestamptz", Kind::Simple, 1185;
    /// `timestamptz[]`
    TIMESTAMPTZ_ARRAY = 1185, "timestamptz[]", Kind::Array(Type::TIMESTAMPTZ), 0;
    /// `interval`
    INTERVAL = 1186, "interval", Kind::Simple, 1187;
    /// `interval[]`
    INTERVAL_ARRAY = 1187, "interval[]", Kind::Array(Type::INTERVAL), 0;
    /// `timetz`
    TIMETZ = 1266, "timetz", Kind::Simple, 1270;
    /// `timetz[]`
    TIMETZ_ARRAY = 1270, "timetz[]", Kind::Array(Type::TIMETZ), 0;
    /// `bit`
    BIT = 1560, "bit", Kind::Simple, 1561;
    /// `bit[]`
    BIT_ARRAY = 1561, "bit[]", Kind::Array(Type::BIT), 0;
    /// `varbit`
    VARBIT = 1562, "varbit", Kind::Simple, 1563;
    /// `varbit[]`
    VARBIT_ARRAY = 1563, "varbit[]", Kind::Array(Type::VARBIT), 0;
    /// `numeric`
    NUMERIC = 1700, "numeric", Kind::Simple, 1231;
    /// `numeric[]`
    NUMERIC_ARRAY = 1231, "numeric[]", Kind::Array(Type::NUMERIC), 0;
    /// `refcursor`
    REFCURSOR = 1790, "refcursor", Kind::Simple, 2201;
    /// `refcursor[]`
    REFCURSOR_ARRAY = 2201, "refcursor[]", Kind::Array(Type::REFCURSOR), 0;
    /// `regprocedure`
    REGPROCEDURE = 2202, "regprocedure", Kind::Simple, 2207;
    /// `regprocedure[]`
    REGPROCEDURE_ARRAY = 2207, "regprocedure[]", Kind::Array(Type::REGPROCEDURE), 0;
    /// `regoper`
    REGOPER = 2203, "regoper", Kind::Simple, 2208;
    /// `regoper[]`
    REGOPER_ARRAY = 2208, "regoper[]", Kind::Array(Type::REGOPER), 0;
    /// `regoperator`
    REGOPERATOR = 2204, "regoperator", Kind::Simple, 2209;
    /// `regoperator[]`
    REGOPERATOR_ARRAY = 2209, "regoperator[]", Kind::Array(Type::REGOPERATOR), 0;
    /// `regclass`
    REGCLASS = 2205, "regclass", Kind::Simple, 2210;
    /// `regclass[]`
    REGCLASS_ARRAY = 2210, "regclass[]", Kind::Array(Type::REGCLASS), 0;
    /// `regtype`
    REGTYPE = 2206, "regtype", Kind::Simple, 2211;
    /// `regtype[]`
    REGTYPE_ARRAY = 2211, "regtype[]", Kind::Array(Type::REGTYPE), 0;
    /// `record`
    RECORD = 2249, "record", Kind::Pseudo, 2287;
    /// `record[]`
    RECORD_ARRAY = 2287, "record[]", Kind::Array(Type::RECORD), 0;
    /// `cstring`
    CSTRING = 2275, "cstring", Kind::Pseudo, 1263;
    /// `cstring[]`
    CSTRING_ARRAY = 1263, "cstring[]", Kind::Array(Type::CSTRING), 0;
    /// `any`
    ANY = 2276, "any", Kind::Pseudo, 0;
    /// `anyarray`
    ANYARRAY = 2277, "anyarray", Kind::Pseudo, 0;
    /// `void`
    VOID = 2278, "void", Kind::Pseudo, 0;
    /// `trigger`
    TRIGGER = 2279, "trigger", Kind::Pseudo, 0;
    /// `anyelement`
    ANYELEMENT = 2283, "anyelement", Kind::Pseudo, 0;
    /// `uuid`
    UUID = 2950, "uuid", Kind::Simple, 2951;
    /// `uuid[]`
    UUID_ARRAY = 2951, "uuid[]", Kind::Array(Type::UUID), 0;
    /// `txid_snapshot`
    TXID_SNAPSHOT = 2970, "txid_snapshot", Kind::Simple, 2949;
    /// `txid_snapshot[]`
    TXID_SNAPSHOT_ARRAY = 2949, "txid_snapshot[]", Kind::Array(Type::TXID_SNAPSHOT), 0;
    /// `pg_lsn`
    PG_LSN = 3220, "pg_lsn", Kind::Simple, 3221;
    /// `pg_lsn[]`
    PG_LSN_ARRAY = 3221, "pg_lsn[]", Kind::Array(Type::PG_LSN), 0;
    /// `tsvector`
    TSVECTOR = 3614, "tsvector", Kind::Simple, 3643;
    /// `tsvector[]`
    TSVECTOR_ARRAY = 3643, "tsvector[]", Kind::Array(Type::TSVECTOR), 0;
    /// `tsquery`
    TSQUERY = 3615, "tsquery", Kind::Simple, 3645;
    /// `tsquery[]`
    TSQUERY_ARRAY = 3645, "tsquery[]", Kind::Array(Type::TSQUERY), 0;
    /// `gtsvector`
    GTSVECTOR = 3642, "gtsvector", Kind::Simple, 3644;
    /// `gtsvector[]`
    GTSVECTOR_ARRAY = 3644, "gtsvector[]", Kind::Array(Type::GTSVECTOR), 0;
    /// `regconfig`
    REGCONFIG = 3734, "regconfig", Kind::Simple, 3735;
    /// `regconfig[]`
    REGCONFIG_ARRAY = 3735, "regconfig[]", Kind::Array(Type::REGCONFIG), 0;
    /// `regdictionary`
    REGDICTIONARY = 3769, "regdictionary", Kind::Simple, 3770;
    /// `regdictionary[]`
    REGDICTIONARY_ARRAY = 3770, "regdictionary[]", Kind::Array(Type::REGDICTIONARY), 0;
    /// `jsonb`
    JSONB = 3802, "jsonb", Kind::Simple, 3807;
    /// `jsonb[]`
    JSONB_ARRAY = 3807, "jsonb[]", Kind::Array(Type::JSONB), 0;
    /// `int4range`
    INT4RANGE = 3904, "int4range", Kind::Range(Type::from_oid(23)), 3905;
    /// `int4range[]`
    INT4RANGE_ARRAY = 3905, "int4range[]", Kind::Array(Type::INT4RANGE), 0;
    /// `numrange`
    NUMRANGE = 3906, "numrange", Kind::Range(Type::from_oid(1700)), 3907;
    /// `numrange[]`
    NUMRANGE_ARRAY = 3907, "numrange[]", Kind::Array(Type::NUMRANGE), 0;
    /// `tsrange`
    TSRANGE = 3908, "tsrange", Kind::Range(Type::from_oid(1114)), 3909;
    /// `tsrange[]`
    TSRANGE_ARRAY = 3909, "tsrange[]", Kind::Array(Type::TSRANGE), 0;
    /// `tstzrange`
    TSTZRANGE = 3910, "tstzrange", Kind::Range(Type::from_oid(1184)), 3911;
    /// `tstzrange[]`
    TSTZRANGE_ARRAY = 3911, "tstzrange[]", Kind::Array(Type::TSTZRANGE), 0;
    /// `daterange`
    DATERANGE = 3912, "daterange", Kind::Range(Type::from_oid(1082)), 3913;
    /// `daterange[]`
    DATERANGE_ARRAY = 3913, "daterange[]", Kind::Array(Type::DATERANGE), 0;
    /// `int8range`
    INT8RANGE = 3926, "int8range", Kind::Range(Type::from_oid(20)), 3927;
    /// `int8range[]`
    INT8RANGE_ARRAY = 3927, "int8range[]", Kind::Array(Type::INT8RANGE), 0;
    /// `jsonpath`
    JSONPATH = 4072, "jsonpath", Kind::Simple, 4073;
    /// `jsonpath[]`
    JSONPATH_ARRAY = 4073, "jsonpath[]", Kind::Array(Type::JSONPATH), 0;
    /// `regnamespace`
    REGNAMESPACE = 4089, "regnamespace", Kind::Simple, 4090;
    /// `regnamespace[]`
    REGNAMESPACE_ARRAY = 4090, "regnamespace[]", Kind::Array(Type::REGNAMESPACE), 0;
    /// `regrole`
    REGROLE = 4096, "regrole", Kind::Simple, 4097;
    /// `regrole[]`
    REGROLE_ARRAY = 4097, "regrole[]", Kind::Array(Type::REGROLE), 0;
    /// `regcollation`
    REGCOLLATION = 4191, "regcollation", Kind::Simple, 4192;
    /// `regcollation[]`
    REGCOLLATION_ARRAY = 4192, "regcollation[]", Kind::Array(Type::REGCOLLATION), 0;
    /// `int4multirange`
    INT4MULTIRANGE = 4451, "int4multirange", Kind::Multirange(Type::from_oid(3904)), 6150;
    /// `int4multirange[]`
    INT4MULTIRANGE_ARRAY = 6150, "int4multirange[]", Kind::Array(Type::INT4MULTIRANGE), 0;
    /// `nummultirange`
    NUMMULTIRANGE = 4532, "nummultirange", Kind::Multirange(Type::from_oid(3906)), 6151;
    /// `nummultirange[]`
    NUMMULTIRANGE_ARRAY = 6151, "nummultirange[]", Kind::Array(Type::NUMMULTIRANGE), 0;
    /// `tsmultirange`
    TSMULTIRANGE = 4533, "tsmultirange", Kind::Multirange(Type::from_oid(3908)), 6152;
    /// `tsmultirange[]`
    TSMULTIRANGE_ARRAY = 6152, "tsmultirange[]", Kind::Array(Type::TSMULTIRANGE), 0;
    /// `tstzmultirange`
    TSTZMULTIRANGE = 4534, "tstzmultirange", Kind::Multirange(Type::from_oid(3910)), 6153;
    /// `tstzmultirange[]`
    TSTZMULTIRANGE_ARRAY = 6153, "tstzmultirange[]", Kind::Array(Type::TSTZMULTIRANGE), 0;
    /// `datemultirange`
    DATEMULTIRANGE = 4535, "datemultirange", Kind::Multirange(Type::from_oid(3912)), 6155;
    /// `datemultirange[]`
    DATEMULTIRANGE_ARRAY = 6155, "datemultirange[]", Kind::Array(Type::DATEMULTIRANGE), 0;
    /// `int8multirange`
    INT8MULTIRANGE = 4536, "int8multirange", Kind::Multirange(Type::from_oid(3926)), 6157;
    /// `int8multirange[]`
    INT8MULTIRANGE_ARRAY = 6157, "int8multirange[]", Kind::Array(Type::INT8MULTIRANGE), 0;
    /// `pg_snapshot`
    PG_SNAPSHOT = 5038, "pg_snapshot", Kind::Simple, 5039;
    /// `pg_snapshot[]`
    PG_SNAPSHOT_ARRAY = 5039, "pg_snapshot[]", Kind::Array(Type::PG_SNAPSHOT), 0;
    /// `xid8`
    XID8 = 5069, "xid8", Kind::Simple, 271;
    /// `xid8[]`
    XID8_ARRAY = 271, "xid8[]", Kind::Array(Type::XID8), 0;
}
