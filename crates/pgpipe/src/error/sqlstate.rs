// @generated from src/backend/utils/errcodes.txt of PostgreSQL 15
// by scripts/gen-sqlstate.py: the constants, `idx`, `TABLE` and `lookup`
// (the rest of this file is written by hand). Regenerate rather than edit
// them by hand when PostgreSQL adds codes. Lookups (`SqlState::from_code`) go through a `match`
// on the 5-byte code, which rustc compiles to a byte-by-byte decision tree: no
// hashing, no allocation.

//! SQLSTATE error codes.
//!
//! [`SqlState`] wraps the five-character SQLSTATE code that PostgreSQL sends
//! in the `C` field of every `ErrorResponse` and `NoticeResponse`. Every code
//! listed in PostgreSQL 15's `errcodes.txt` has an associated constant,
//! so errors can be matched without string comparisons:
//!
//! ```
//! use pgpipe::SqlState;
//!
//! let code = SqlState::from_code("23505");
//! assert_eq!(code, SqlState::UNIQUE_VIOLATION);
//! assert_eq!(code.name(), Some("unique_violation"));
//! ```
//!
//! # Constant names
//!
//! The constants are named as in `tokio-postgres`: each is the C macro name
//! from `errcodes.txt` with its `ERRCODE_` prefix removed. That is the
//! SCREAMING_SNAKE_CASE form of the condition name for most codes
//! (`23505 unique_violation` is [`SqlState::UNIQUE_VIOLATION`]), except that:
//!
//! * class `01` warnings carry a `WARNING_` prefix, so a condition name used in
//!   two classes stays unambiguous: [`SqlState::WARNING_STRING_DATA_RIGHT_TRUNCATION`]
//!   is `01004`, [`SqlState::STRING_DATA_RIGHT_TRUNCATION`] is `22001`;
//! * some classes' macros carry an abbreviated class prefix, which the
//!   constants keep: `L_E_` (locator exception, class `0F`), `S_R_E_` (SQL
//!   routine exception, `2F`), `E_R_E_` (external routine exception, `38`),
//!   `E_R_I_E_` (external routine invocation exception, `39`), `S_E_`
//!   (savepoint exception, `3B`) and `T_R_` (transaction rollback, `40`).
//!   This also keeps the condition names shared by classes `2F`, `38` and
//!   `39` apart ([`SqlState::S_R_E_MODIFYING_SQL_DATA_NOT_PERMITTED`] is
//!   `2F002`, [`SqlState::E_R_E_MODIFYING_SQL_DATA_NOT_PERMITTED`] is
//!   `38002`), and makes `40001 serialization_failure`
//!   [`SqlState::T_R_SERIALIZATION_FAILURE`];
//! * a few C macro names differ from the condition name
//!   (`2201E invalid_argument_for_logarithm` is
//!   [`SqlState::INVALID_ARGUMENT_FOR_LOG`]);
//! * where several C macros share one code, each gets a constant and the
//!   constants are equal (for example [`SqlState::UNDEFINED_CURSOR`] and
//!   [`SqlState::INVALID_CURSOR_NAME`] are both `34000`).
//!
//! Codes that this table does not know (newer servers, extensions) are kept
//! as they are: [`SqlState::code`] returns them and [`SqlState::name`] returns
//! `None`.

use std::fmt;

/// A SQLSTATE error code.
///
/// Two values are equal exactly when their codes are equal, whether they
/// come from a constant or from [`SqlState::from_code`].
///
/// Known codes are stored as an index into a static table; other codes of
/// five ASCII letters or digits are stored inline. Neither allocates. Any
/// other string (which a conforming server never sends) is kept in a box.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SqlState(Inner);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Inner {
    /// Index into `TABLE`.
    Known(u16),
    /// Five ASCII alphanumerics that are not in `TABLE`.
    Unknown([u8; 5]),
    /// Anything else.
    Other(Box<str>),
}

impl SqlState {
    /// Parses a SQLSTATE code.
    ///
    /// Never fails: unknown codes are kept as they are. Codes of five ASCII
    /// letters or digits never allocate.
    pub fn from_code(code: &str) -> SqlState {
        let inner = match <[u8; 5]>::try_from(code.as_bytes()) {
            Ok(bytes) => match lookup(&bytes) {
                Some(index) => Inner::Known(index),
                None if bytes.iter().all(u8::is_ascii_alphanumeric) => Inner::Unknown(bytes),
                None => Inner::Other(code.into()),
            },
            Err(_) => Inner::Other(code.into()),
        };
        SqlState(inner)
    }

    /// The code, e.g. `"23505"`.
    pub fn code(&self) -> &str {
        match &self.0 {
            Inner::Known(index) => TABLE[usize::from(*index)].0,
            // Only ASCII alphanumerics are stored inline.
            Inner::Unknown(bytes) => std::str::from_utf8(bytes).unwrap_or_default(),
            Inner::Other(code) => code,
        }
    }

    /// The condition name from PostgreSQL's `errcodes.txt` (the name
    /// PL/pgSQL uses), e.g. `"unique_violation"`, or `None` for a code this
    /// table does not know.
    pub fn name(&self) -> Option<&'static str> {
        match self.0 {
            Inner::Known(index) => Some(TABLE[usize::from(index)].1),
            _ => None,
        }
    }

    /// The class: the first two characters of the code, e.g. `"23"` for
    /// `"23505"`. A malformed code shorter than two characters is returned
    /// whole.
    pub fn class(&self) -> &str {
        let code = self.code();
        code.get(..2).unwrap_or(code)
    }

    const fn known(index: u16) -> SqlState {
        SqlState(Inner::Known(index))
    }
}

impl fmt::Debug for SqlState {
    /// `SqlState(23505 unique_violation)`, `SqlState(ZZ999)` for a code not in
    /// the table, `SqlState("bad")` for a malformed one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.0, self.name()) {
            (Inner::Other(code), _) => write!(f, "SqlState({code:?})"),
            (_, Some(name)) => write!(f, "SqlState({} {name})", self.code()),
            (_, None) => write!(f, "SqlState({})", self.code()),
        }
    }
}

impl fmt::Display for SqlState {
    /// The code, e.g. `23505`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl From<&str> for SqlState {
    /// Same as [`SqlState::from_code`].
    fn from(code: &str) -> SqlState {
        SqlState::from_code(code)
    }
}

impl SqlState {
    // Class 00 - Successful Completion
    /// `00000` `successful_completion`.
    pub const SUCCESSFUL_COMPLETION: SqlState = SqlState::known(idx::E00000);

    // Class 01 - Warning
    /// `01000` `warning`.
    pub const WARNING: SqlState = SqlState::known(idx::E01000);
    /// `0100C` `dynamic_result_sets_returned`.
    pub const WARNING_DYNAMIC_RESULT_SETS_RETURNED: SqlState = SqlState::known(idx::E0100C);
    /// `01008` `implicit_zero_bit_padding`.
    pub const WARNING_IMPLICIT_ZERO_BIT_PADDING: SqlState = SqlState::known(idx::E01008);
    /// `01003` `null_value_eliminated_in_set_function`.
    pub const WARNING_NULL_VALUE_ELIMINATED_IN_SET_FUNCTION: SqlState =
        SqlState::known(idx::E01003);
    /// `01007` `privilege_not_granted`.
    pub const WARNING_PRIVILEGE_NOT_GRANTED: SqlState = SqlState::known(idx::E01007);
    /// `01006` `privilege_not_revoked`.
    pub const WARNING_PRIVILEGE_NOT_REVOKED: SqlState = SqlState::known(idx::E01006);
    /// `01004` `string_data_right_truncation`.
    pub const WARNING_STRING_DATA_RIGHT_TRUNCATION: SqlState = SqlState::known(idx::E01004);
    /// `01P01` `deprecated_feature`.
    pub const WARNING_DEPRECATED_FEATURE: SqlState = SqlState::known(idx::E01P01);

    // Class 02 - No Data (this is also a warning class per the SQL standard)
    /// `02000` `no_data`.
    pub const NO_DATA: SqlState = SqlState::known(idx::E02000);
    /// `02001` `no_additional_dynamic_result_sets_returned`.
    pub const NO_ADDITIONAL_DYNAMIC_RESULT_SETS_RETURNED: SqlState = SqlState::known(idx::E02001);

    // Class 03 - SQL Statement Not Yet Complete
    /// `03000` `sql_statement_not_yet_complete`.
    pub const SQL_STATEMENT_NOT_YET_COMPLETE: SqlState = SqlState::known(idx::E03000);

    // Class 08 - Connection Exception
    /// `08000` `connection_exception`.
    pub const CONNECTION_EXCEPTION: SqlState = SqlState::known(idx::E08000);
    /// `08003` `connection_does_not_exist`.
    pub const CONNECTION_DOES_NOT_EXIST: SqlState = SqlState::known(idx::E08003);
    /// `08006` `connection_failure`.
    pub const CONNECTION_FAILURE: SqlState = SqlState::known(idx::E08006);
    /// `08001` `sqlclient_unable_to_establish_sqlconnection`.
    pub const SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION: SqlState = SqlState::known(idx::E08001);
    /// `08004` `sqlserver_rejected_establishment_of_sqlconnection`.
    pub const SQLSERVER_REJECTED_ESTABLISHMENT_OF_SQLCONNECTION: SqlState =
        SqlState::known(idx::E08004);
    /// `08007` `transaction_resolution_unknown`.
    pub const TRANSACTION_RESOLUTION_UNKNOWN: SqlState = SqlState::known(idx::E08007);
    /// `08P01` `protocol_violation`.
    pub const PROTOCOL_VIOLATION: SqlState = SqlState::known(idx::E08P01);

    // Class 09 - Triggered Action Exception
    /// `09000` `triggered_action_exception`.
    pub const TRIGGERED_ACTION_EXCEPTION: SqlState = SqlState::known(idx::E09000);

    // Class 0A - Feature Not Supported
    /// `0A000` `feature_not_supported`.
    pub const FEATURE_NOT_SUPPORTED: SqlState = SqlState::known(idx::E0A000);

    // Class 0B - Invalid Transaction Initiation
    /// `0B000` `invalid_transaction_initiation`.
    pub const INVALID_TRANSACTION_INITIATION: SqlState = SqlState::known(idx::E0B000);

    // Class 0F - Locator Exception
    /// `0F000` `locator_exception`.
    pub const LOCATOR_EXCEPTION: SqlState = SqlState::known(idx::E0F000);
    /// `0F001` `invalid_locator_specification`.
    pub const L_E_INVALID_SPECIFICATION: SqlState = SqlState::known(idx::E0F001);

    // Class 0L - Invalid Grantor
    /// `0L000` `invalid_grantor`.
    pub const INVALID_GRANTOR: SqlState = SqlState::known(idx::E0L000);
    /// `0LP01` `invalid_grant_operation`.
    pub const INVALID_GRANT_OPERATION: SqlState = SqlState::known(idx::E0LP01);

    // Class 0P - Invalid Role Specification
    /// `0P000` `invalid_role_specification`.
    pub const INVALID_ROLE_SPECIFICATION: SqlState = SqlState::known(idx::E0P000);

    // Class 0Z - Diagnostics Exception
    /// `0Z000` `diagnostics_exception`.
    pub const DIAGNOSTICS_EXCEPTION: SqlState = SqlState::known(idx::E0Z000);
    /// `0Z002` `stacked_diagnostics_accessed_without_active_handler`.
    pub const STACKED_DIAGNOSTICS_ACCESSED_WITHOUT_ACTIVE_HANDLER: SqlState =
        SqlState::known(idx::E0Z002);

    // Class 20 - Case Not Found
    /// `20000` `case_not_found`.
    pub const CASE_NOT_FOUND: SqlState = SqlState::known(idx::E20000);

    // Class 21 - Cardinality Violation
    /// `21000` `cardinality_violation`.
    pub const CARDINALITY_VIOLATION: SqlState = SqlState::known(idx::E21000);

    // Class 22 - Data Exception
    /// `22000` `data_exception`.
    pub const DATA_EXCEPTION: SqlState = SqlState::known(idx::E22000);
    /// `2202E` `array_subscript_error`.
    pub const ARRAY_ELEMENT_ERROR: SqlState = SqlState::known(idx::E2202E);
    /// `2202E` `array_subscript_error` (same code as [`SqlState::ARRAY_ELEMENT_ERROR`]).
    pub const ARRAY_SUBSCRIPT_ERROR: SqlState = SqlState::known(idx::E2202E);
    /// `22021` `character_not_in_repertoire`.
    pub const CHARACTER_NOT_IN_REPERTOIRE: SqlState = SqlState::known(idx::E22021);
    /// `22008` `datetime_field_overflow`.
    pub const DATETIME_FIELD_OVERFLOW: SqlState = SqlState::known(idx::E22008);
    /// `22008` `datetime_field_overflow` (same code as [`SqlState::DATETIME_FIELD_OVERFLOW`]).
    pub const DATETIME_VALUE_OUT_OF_RANGE: SqlState = SqlState::known(idx::E22008);
    /// `22012` `division_by_zero`.
    pub const DIVISION_BY_ZERO: SqlState = SqlState::known(idx::E22012);
    /// `22005` `error_in_assignment`.
    pub const ERROR_IN_ASSIGNMENT: SqlState = SqlState::known(idx::E22005);
    /// `2200B` `escape_character_conflict`.
    pub const ESCAPE_CHARACTER_CONFLICT: SqlState = SqlState::known(idx::E2200B);
    /// `22022` `indicator_overflow`.
    pub const INDICATOR_OVERFLOW: SqlState = SqlState::known(idx::E22022);
    /// `22015` `interval_field_overflow`.
    pub const INTERVAL_FIELD_OVERFLOW: SqlState = SqlState::known(idx::E22015);
    /// `2201E` `invalid_argument_for_logarithm`.
    pub const INVALID_ARGUMENT_FOR_LOG: SqlState = SqlState::known(idx::E2201E);
    /// `22014` `invalid_argument_for_ntile_function`.
    pub const INVALID_ARGUMENT_FOR_NTILE: SqlState = SqlState::known(idx::E22014);
    /// `22016` `invalid_argument_for_nth_value_function`.
    pub const INVALID_ARGUMENT_FOR_NTH_VALUE: SqlState = SqlState::known(idx::E22016);
    /// `2201F` `invalid_argument_for_power_function`.
    pub const INVALID_ARGUMENT_FOR_POWER_FUNCTION: SqlState = SqlState::known(idx::E2201F);
    /// `2201G` `invalid_argument_for_width_bucket_function`.
    pub const INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION: SqlState = SqlState::known(idx::E2201G);
    /// `22018` `invalid_character_value_for_cast`.
    pub const INVALID_CHARACTER_VALUE_FOR_CAST: SqlState = SqlState::known(idx::E22018);
    /// `22007` `invalid_datetime_format`.
    pub const INVALID_DATETIME_FORMAT: SqlState = SqlState::known(idx::E22007);
    /// `22019` `invalid_escape_character`.
    pub const INVALID_ESCAPE_CHARACTER: SqlState = SqlState::known(idx::E22019);
    /// `2200D` `invalid_escape_octet`.
    pub const INVALID_ESCAPE_OCTET: SqlState = SqlState::known(idx::E2200D);
    /// `22025` `invalid_escape_sequence`.
    pub const INVALID_ESCAPE_SEQUENCE: SqlState = SqlState::known(idx::E22025);
    /// `22P06` `nonstandard_use_of_escape_character`.
    pub const NONSTANDARD_USE_OF_ESCAPE_CHARACTER: SqlState = SqlState::known(idx::E22P06);
    /// `22010` `invalid_indicator_parameter_value`.
    pub const INVALID_INDICATOR_PARAMETER_VALUE: SqlState = SqlState::known(idx::E22010);
    /// `22023` `invalid_parameter_value`.
    pub const INVALID_PARAMETER_VALUE: SqlState = SqlState::known(idx::E22023);
    /// `22013` `invalid_preceding_or_following_size`.
    pub const INVALID_PRECEDING_OR_FOLLOWING_SIZE: SqlState = SqlState::known(idx::E22013);
    /// `2201B` `invalid_regular_expression`.
    pub const INVALID_REGULAR_EXPRESSION: SqlState = SqlState::known(idx::E2201B);
    /// `2201W` `invalid_row_count_in_limit_clause`.
    pub const INVALID_ROW_COUNT_IN_LIMIT_CLAUSE: SqlState = SqlState::known(idx::E2201W);
    /// `2201X` `invalid_row_count_in_result_offset_clause`.
    pub const INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE: SqlState = SqlState::known(idx::E2201X);
    /// `2202H` `invalid_tablesample_argument`.
    pub const INVALID_TABLESAMPLE_ARGUMENT: SqlState = SqlState::known(idx::E2202H);
    /// `2202G` `invalid_tablesample_repeat`.
    pub const INVALID_TABLESAMPLE_REPEAT: SqlState = SqlState::known(idx::E2202G);
    /// `22009` `invalid_time_zone_displacement_value`.
    pub const INVALID_TIME_ZONE_DISPLACEMENT_VALUE: SqlState = SqlState::known(idx::E22009);
    /// `2200C` `invalid_use_of_escape_character`.
    pub const INVALID_USE_OF_ESCAPE_CHARACTER: SqlState = SqlState::known(idx::E2200C);
    /// `2200G` `most_specific_type_mismatch`.
    pub const MOST_SPECIFIC_TYPE_MISMATCH: SqlState = SqlState::known(idx::E2200G);
    /// `22004` `null_value_not_allowed`.
    pub const NULL_VALUE_NOT_ALLOWED: SqlState = SqlState::known(idx::E22004);
    /// `22002` `null_value_no_indicator_parameter`.
    pub const NULL_VALUE_NO_INDICATOR_PARAMETER: SqlState = SqlState::known(idx::E22002);
    /// `22003` `numeric_value_out_of_range`.
    pub const NUMERIC_VALUE_OUT_OF_RANGE: SqlState = SqlState::known(idx::E22003);
    /// `2200H` `sequence_generator_limit_exceeded`.
    pub const SEQUENCE_GENERATOR_LIMIT_EXCEEDED: SqlState = SqlState::known(idx::E2200H);
    /// `22026` `string_data_length_mismatch`.
    pub const STRING_DATA_LENGTH_MISMATCH: SqlState = SqlState::known(idx::E22026);
    /// `22001` `string_data_right_truncation`.
    pub const STRING_DATA_RIGHT_TRUNCATION: SqlState = SqlState::known(idx::E22001);
    /// `22011` `substring_error`.
    pub const SUBSTRING_ERROR: SqlState = SqlState::known(idx::E22011);
    /// `22027` `trim_error`.
    pub const TRIM_ERROR: SqlState = SqlState::known(idx::E22027);
    /// `22024` `unterminated_c_string`.
    pub const UNTERMINATED_C_STRING: SqlState = SqlState::known(idx::E22024);
    /// `2200F` `zero_length_character_string`.
    pub const ZERO_LENGTH_CHARACTER_STRING: SqlState = SqlState::known(idx::E2200F);
    /// `22P01` `floating_point_exception`.
    pub const FLOATING_POINT_EXCEPTION: SqlState = SqlState::known(idx::E22P01);
    /// `22P02` `invalid_text_representation`.
    pub const INVALID_TEXT_REPRESENTATION: SqlState = SqlState::known(idx::E22P02);
    /// `22P03` `invalid_binary_representation`.
    pub const INVALID_BINARY_REPRESENTATION: SqlState = SqlState::known(idx::E22P03);
    /// `22P04` `bad_copy_file_format`.
    pub const BAD_COPY_FILE_FORMAT: SqlState = SqlState::known(idx::E22P04);
    /// `22P05` `untranslatable_character`.
    pub const UNTRANSLATABLE_CHARACTER: SqlState = SqlState::known(idx::E22P05);
    /// `2200L` `not_an_xml_document`.
    pub const NOT_AN_XML_DOCUMENT: SqlState = SqlState::known(idx::E2200L);
    /// `2200M` `invalid_xml_document`.
    pub const INVALID_XML_DOCUMENT: SqlState = SqlState::known(idx::E2200M);
    /// `2200N` `invalid_xml_content`.
    pub const INVALID_XML_CONTENT: SqlState = SqlState::known(idx::E2200N);
    /// `2200S` `invalid_xml_comment`.
    pub const INVALID_XML_COMMENT: SqlState = SqlState::known(idx::E2200S);
    /// `2200T` `invalid_xml_processing_instruction`.
    pub const INVALID_XML_PROCESSING_INSTRUCTION: SqlState = SqlState::known(idx::E2200T);
    /// `22030` `duplicate_json_object_key_value`.
    pub const DUPLICATE_JSON_OBJECT_KEY_VALUE: SqlState = SqlState::known(idx::E22030);
    /// `22031` `invalid_argument_for_sql_json_datetime_function`.
    pub const INVALID_ARGUMENT_FOR_SQL_JSON_DATETIME_FUNCTION: SqlState =
        SqlState::known(idx::E22031);
    /// `22032` `invalid_json_text`.
    pub const INVALID_JSON_TEXT: SqlState = SqlState::known(idx::E22032);
    /// `22033` `invalid_sql_json_subscript`.
    pub const INVALID_SQL_JSON_SUBSCRIPT: SqlState = SqlState::known(idx::E22033);
    /// `22034` `more_than_one_sql_json_item`.
    pub const MORE_THAN_ONE_SQL_JSON_ITEM: SqlState = SqlState::known(idx::E22034);
    /// `22035` `no_sql_json_item`.
    pub const NO_SQL_JSON_ITEM: SqlState = SqlState::known(idx::E22035);
    /// `22036` `non_numeric_sql_json_item`.
    pub const NON_NUMERIC_SQL_JSON_ITEM: SqlState = SqlState::known(idx::E22036);
    /// `22037` `non_unique_keys_in_a_json_object`.
    pub const NON_UNIQUE_KEYS_IN_A_JSON_OBJECT: SqlState = SqlState::known(idx::E22037);
    /// `22038` `singleton_sql_json_item_required`.
    pub const SINGLETON_SQL_JSON_ITEM_REQUIRED: SqlState = SqlState::known(idx::E22038);
    /// `22039` `sql_json_array_not_found`.
    pub const SQL_JSON_ARRAY_NOT_FOUND: SqlState = SqlState::known(idx::E22039);
    /// `2203A` `sql_json_member_not_found`.
    pub const SQL_JSON_MEMBER_NOT_FOUND: SqlState = SqlState::known(idx::E2203A);
    /// `2203B` `sql_json_number_not_found`.
    pub const SQL_JSON_NUMBER_NOT_FOUND: SqlState = SqlState::known(idx::E2203B);
    /// `2203C` `sql_json_object_not_found`.
    pub const SQL_JSON_OBJECT_NOT_FOUND: SqlState = SqlState::known(idx::E2203C);
    /// `2203D` `too_many_json_array_elements`.
    pub const TOO_MANY_JSON_ARRAY_ELEMENTS: SqlState = SqlState::known(idx::E2203D);
    /// `2203E` `too_many_json_object_members`.
    pub const TOO_MANY_JSON_OBJECT_MEMBERS: SqlState = SqlState::known(idx::E2203E);
    /// `2203F` `sql_json_scalar_required`.
    pub const SQL_JSON_SCALAR_REQUIRED: SqlState = SqlState::known(idx::E2203F);
    /// `2203G` `sql_json_item_cannot_be_cast_to_target_type`.
    pub const SQL_JSON_ITEM_CANNOT_BE_CAST_TO_TARGET_TYPE: SqlState = SqlState::known(idx::E2203G);

    // Class 23 - Integrity Constraint Violation
    /// `23000` `integrity_constraint_violation`.
    pub const INTEGRITY_CONSTRAINT_VIOLATION: SqlState = SqlState::known(idx::E23000);
    /// `23001` `restrict_violation`.
    pub const RESTRICT_VIOLATION: SqlState = SqlState::known(idx::E23001);
    /// `23502` `not_null_violation`.
    pub const NOT_NULL_VIOLATION: SqlState = SqlState::known(idx::E23502);
    /// `23503` `foreign_key_violation`.
    pub const FOREIGN_KEY_VIOLATION: SqlState = SqlState::known(idx::E23503);
    /// `23505` `unique_violation`.
    pub const UNIQUE_VIOLATION: SqlState = SqlState::known(idx::E23505);
    /// `23514` `check_violation`.
    pub const CHECK_VIOLATION: SqlState = SqlState::known(idx::E23514);
    /// `23P01` `exclusion_violation`.
    pub const EXCLUSION_VIOLATION: SqlState = SqlState::known(idx::E23P01);

    // Class 24 - Invalid Cursor State
    /// `24000` `invalid_cursor_state`.
    pub const INVALID_CURSOR_STATE: SqlState = SqlState::known(idx::E24000);

    // Class 25 - Invalid Transaction State
    /// `25000` `invalid_transaction_state`.
    pub const INVALID_TRANSACTION_STATE: SqlState = SqlState::known(idx::E25000);
    /// `25001` `active_sql_transaction`.
    pub const ACTIVE_SQL_TRANSACTION: SqlState = SqlState::known(idx::E25001);
    /// `25002` `branch_transaction_already_active`.
    pub const BRANCH_TRANSACTION_ALREADY_ACTIVE: SqlState = SqlState::known(idx::E25002);
    /// `25008` `held_cursor_requires_same_isolation_level`.
    pub const HELD_CURSOR_REQUIRES_SAME_ISOLATION_LEVEL: SqlState = SqlState::known(idx::E25008);
    /// `25003` `inappropriate_access_mode_for_branch_transaction`.
    pub const INAPPROPRIATE_ACCESS_MODE_FOR_BRANCH_TRANSACTION: SqlState =
        SqlState::known(idx::E25003);
    /// `25004` `inappropriate_isolation_level_for_branch_transaction`.
    pub const INAPPROPRIATE_ISOLATION_LEVEL_FOR_BRANCH_TRANSACTION: SqlState =
        SqlState::known(idx::E25004);
    /// `25005` `no_active_sql_transaction_for_branch_transaction`.
    pub const NO_ACTIVE_SQL_TRANSACTION_FOR_BRANCH_TRANSACTION: SqlState =
        SqlState::known(idx::E25005);
    /// `25006` `read_only_sql_transaction`.
    pub const READ_ONLY_SQL_TRANSACTION: SqlState = SqlState::known(idx::E25006);
    /// `25007` `schema_and_data_statement_mixing_not_supported`.
    pub const SCHEMA_AND_DATA_STATEMENT_MIXING_NOT_SUPPORTED: SqlState =
        SqlState::known(idx::E25007);
    /// `25P01` `no_active_sql_transaction`.
    pub const NO_ACTIVE_SQL_TRANSACTION: SqlState = SqlState::known(idx::E25P01);
    /// `25P02` `in_failed_sql_transaction`.
    pub const IN_FAILED_SQL_TRANSACTION: SqlState = SqlState::known(idx::E25P02);
    /// `25P03` `idle_in_transaction_session_timeout`.
    pub const IDLE_IN_TRANSACTION_SESSION_TIMEOUT: SqlState = SqlState::known(idx::E25P03);

    // Class 26 - Invalid SQL Statement Name
    /// `26000` `invalid_sql_statement_name`.
    pub const INVALID_SQL_STATEMENT_NAME: SqlState = SqlState::known(idx::E26000);

    // Class 27 - Triggered Data Change Violation
    /// `27000` `triggered_data_change_violation`.
    pub const TRIGGERED_DATA_CHANGE_VIOLATION: SqlState = SqlState::known(idx::E27000);

    // Class 28 - Invalid Authorization Specification
    /// `28000` `invalid_authorization_specification`.
    pub const INVALID_AUTHORIZATION_SPECIFICATION: SqlState = SqlState::known(idx::E28000);
    /// `28P01` `invalid_password`.
    pub const INVALID_PASSWORD: SqlState = SqlState::known(idx::E28P01);

    // Class 2B - Dependent Privilege Descriptors Still Exist
    /// `2B000` `dependent_privilege_descriptors_still_exist`.
    pub const DEPENDENT_PRIVILEGE_DESCRIPTORS_STILL_EXIST: SqlState = SqlState::known(idx::E2B000);
    /// `2BP01` `dependent_objects_still_exist`.
    pub const DEPENDENT_OBJECTS_STILL_EXIST: SqlState = SqlState::known(idx::E2BP01);

    // Class 2D - Invalid Transaction Termination
    /// `2D000` `invalid_transaction_termination`.
    pub const INVALID_TRANSACTION_TERMINATION: SqlState = SqlState::known(idx::E2D000);

    // Class 2F - SQL Routine Exception
    /// `2F000` `sql_routine_exception`.
    pub const SQL_ROUTINE_EXCEPTION: SqlState = SqlState::known(idx::E2F000);
    /// `2F005` `function_executed_no_return_statement`.
    pub const S_R_E_FUNCTION_EXECUTED_NO_RETURN_STATEMENT: SqlState = SqlState::known(idx::E2F005);
    /// `2F002` `modifying_sql_data_not_permitted`.
    pub const S_R_E_MODIFYING_SQL_DATA_NOT_PERMITTED: SqlState = SqlState::known(idx::E2F002);
    /// `2F003` `prohibited_sql_statement_attempted`.
    pub const S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED: SqlState = SqlState::known(idx::E2F003);
    /// `2F004` `reading_sql_data_not_permitted`.
    pub const S_R_E_READING_SQL_DATA_NOT_PERMITTED: SqlState = SqlState::known(idx::E2F004);

    // Class 34 - Invalid Cursor Name
    /// `34000` `invalid_cursor_name`.
    pub const INVALID_CURSOR_NAME: SqlState = SqlState::known(idx::E34000);

    // Class 38 - External Routine Exception
    /// `38000` `external_routine_exception`.
    pub const EXTERNAL_ROUTINE_EXCEPTION: SqlState = SqlState::known(idx::E38000);
    /// `38001` `containing_sql_not_permitted`.
    pub const E_R_E_CONTAINING_SQL_NOT_PERMITTED: SqlState = SqlState::known(idx::E38001);
    /// `38002` `modifying_sql_data_not_permitted`.
    pub const E_R_E_MODIFYING_SQL_DATA_NOT_PERMITTED: SqlState = SqlState::known(idx::E38002);
    /// `38003` `prohibited_sql_statement_attempted`.
    pub const E_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED: SqlState = SqlState::known(idx::E38003);
    /// `38004` `reading_sql_data_not_permitted`.
    pub const E_R_E_READING_SQL_DATA_NOT_PERMITTED: SqlState = SqlState::known(idx::E38004);

    // Class 39 - External Routine Invocation Exception
    /// `39000` `external_routine_invocation_exception`.
    pub const EXTERNAL_ROUTINE_INVOCATION_EXCEPTION: SqlState = SqlState::known(idx::E39000);
    /// `39001` `invalid_sqlstate_returned`.
    pub const E_R_I_E_INVALID_SQLSTATE_RETURNED: SqlState = SqlState::known(idx::E39001);
    /// `39004` `null_value_not_allowed`.
    pub const E_R_I_E_NULL_VALUE_NOT_ALLOWED: SqlState = SqlState::known(idx::E39004);
    /// `39P01` `trigger_protocol_violated`.
    pub const E_R_I_E_TRIGGER_PROTOCOL_VIOLATED: SqlState = SqlState::known(idx::E39P01);
    /// `39P02` `srf_protocol_violated`.
    pub const E_R_I_E_SRF_PROTOCOL_VIOLATED: SqlState = SqlState::known(idx::E39P02);
    /// `39P03` `event_trigger_protocol_violated`.
    pub const E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED: SqlState = SqlState::known(idx::E39P03);

    // Class 3B - Savepoint Exception
    /// `3B000` `savepoint_exception`.
    pub const SAVEPOINT_EXCEPTION: SqlState = SqlState::known(idx::E3B000);
    /// `3B001` `invalid_savepoint_specification`.
    pub const S_E_INVALID_SPECIFICATION: SqlState = SqlState::known(idx::E3B001);

    // Class 3D - Invalid Catalog Name
    /// `3D000` `invalid_catalog_name`.
    pub const INVALID_CATALOG_NAME: SqlState = SqlState::known(idx::E3D000);

    // Class 3F - Invalid Schema Name
    /// `3F000` `invalid_schema_name`.
    pub const INVALID_SCHEMA_NAME: SqlState = SqlState::known(idx::E3F000);

    // Class 40 - Transaction Rollback
    /// `40000` `transaction_rollback`.
    pub const TRANSACTION_ROLLBACK: SqlState = SqlState::known(idx::E40000);
    /// `40002` `transaction_integrity_constraint_violation`.
    pub const T_R_INTEGRITY_CONSTRAINT_VIOLATION: SqlState = SqlState::known(idx::E40002);
    /// `40001` `serialization_failure`.
    pub const T_R_SERIALIZATION_FAILURE: SqlState = SqlState::known(idx::E40001);
    /// `40003` `statement_completion_unknown`.
    pub const T_R_STATEMENT_COMPLETION_UNKNOWN: SqlState = SqlState::known(idx::E40003);
    /// `40P01` `deadlock_detected`.
    pub const T_R_DEADLOCK_DETECTED: SqlState = SqlState::known(idx::E40P01);

    // Class 42 - Syntax Error or Access Rule Violation
    /// `42000` `syntax_error_or_access_rule_violation`.
    pub const SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION: SqlState = SqlState::known(idx::E42000);
    /// `42601` `syntax_error`.
    pub const SYNTAX_ERROR: SqlState = SqlState::known(idx::E42601);
    /// `42501` `insufficient_privilege`.
    pub const INSUFFICIENT_PRIVILEGE: SqlState = SqlState::known(idx::E42501);
    /// `42846` `cannot_coerce`.
    pub const CANNOT_COERCE: SqlState = SqlState::known(idx::E42846);
    /// `42803` `grouping_error`.
    pub const GROUPING_ERROR: SqlState = SqlState::known(idx::E42803);
    /// `42P20` `windowing_error`.
    pub const WINDOWING_ERROR: SqlState = SqlState::known(idx::E42P20);
    /// `42P19` `invalid_recursion`.
    pub const INVALID_RECURSION: SqlState = SqlState::known(idx::E42P19);
    /// `42830` `invalid_foreign_key`.
    pub const INVALID_FOREIGN_KEY: SqlState = SqlState::known(idx::E42830);
    /// `42602` `invalid_name`.
    pub const INVALID_NAME: SqlState = SqlState::known(idx::E42602);
    /// `42622` `name_too_long`.
    pub const NAME_TOO_LONG: SqlState = SqlState::known(idx::E42622);
    /// `42939` `reserved_name`.
    pub const RESERVED_NAME: SqlState = SqlState::known(idx::E42939);
    /// `42804` `datatype_mismatch`.
    pub const DATATYPE_MISMATCH: SqlState = SqlState::known(idx::E42804);
    /// `42P18` `indeterminate_datatype`.
    pub const INDETERMINATE_DATATYPE: SqlState = SqlState::known(idx::E42P18);
    /// `42P21` `collation_mismatch`.
    pub const COLLATION_MISMATCH: SqlState = SqlState::known(idx::E42P21);
    /// `42P22` `indeterminate_collation`.
    pub const INDETERMINATE_COLLATION: SqlState = SqlState::known(idx::E42P22);
    /// `42809` `wrong_object_type`.
    pub const WRONG_OBJECT_TYPE: SqlState = SqlState::known(idx::E42809);
    /// `428C9` `generated_always`.
    pub const GENERATED_ALWAYS: SqlState = SqlState::known(idx::E428C9);
    /// `42703` `undefined_column`.
    pub const UNDEFINED_COLUMN: SqlState = SqlState::known(idx::E42703);
    /// `34000` `invalid_cursor_name` (same code as [`SqlState::INVALID_CURSOR_NAME`]).
    pub const UNDEFINED_CURSOR: SqlState = SqlState::known(idx::E34000);
    /// `3D000` `invalid_catalog_name` (same code as [`SqlState::INVALID_CATALOG_NAME`]).
    pub const UNDEFINED_DATABASE: SqlState = SqlState::known(idx::E3D000);
    /// `42883` `undefined_function`.
    pub const UNDEFINED_FUNCTION: SqlState = SqlState::known(idx::E42883);
    /// `26000` `invalid_sql_statement_name` (same code as [`SqlState::INVALID_SQL_STATEMENT_NAME`]).
    pub const UNDEFINED_PSTATEMENT: SqlState = SqlState::known(idx::E26000);
    /// `3F000` `invalid_schema_name` (same code as [`SqlState::INVALID_SCHEMA_NAME`]).
    pub const UNDEFINED_SCHEMA: SqlState = SqlState::known(idx::E3F000);
    /// `42P01` `undefined_table`.
    pub const UNDEFINED_TABLE: SqlState = SqlState::known(idx::E42P01);
    /// `42P02` `undefined_parameter`.
    pub const UNDEFINED_PARAMETER: SqlState = SqlState::known(idx::E42P02);
    /// `42704` `undefined_object`.
    pub const UNDEFINED_OBJECT: SqlState = SqlState::known(idx::E42704);
    /// `42701` `duplicate_column`.
    pub const DUPLICATE_COLUMN: SqlState = SqlState::known(idx::E42701);
    /// `42P03` `duplicate_cursor`.
    pub const DUPLICATE_CURSOR: SqlState = SqlState::known(idx::E42P03);
    /// `42P04` `duplicate_database`.
    pub const DUPLICATE_DATABASE: SqlState = SqlState::known(idx::E42P04);
    /// `42723` `duplicate_function`.
    pub const DUPLICATE_FUNCTION: SqlState = SqlState::known(idx::E42723);
    /// `42P05` `duplicate_prepared_statement`.
    pub const DUPLICATE_PSTATEMENT: SqlState = SqlState::known(idx::E42P05);
    /// `42P06` `duplicate_schema`.
    pub const DUPLICATE_SCHEMA: SqlState = SqlState::known(idx::E42P06);
    /// `42P07` `duplicate_table`.
    pub const DUPLICATE_TABLE: SqlState = SqlState::known(idx::E42P07);
    /// `42712` `duplicate_alias`.
    pub const DUPLICATE_ALIAS: SqlState = SqlState::known(idx::E42712);
    /// `42710` `duplicate_object`.
    pub const DUPLICATE_OBJECT: SqlState = SqlState::known(idx::E42710);
    /// `42702` `ambiguous_column`.
    pub const AMBIGUOUS_COLUMN: SqlState = SqlState::known(idx::E42702);
    /// `42725` `ambiguous_function`.
    pub const AMBIGUOUS_FUNCTION: SqlState = SqlState::known(idx::E42725);
    /// `42P08` `ambiguous_parameter`.
    pub const AMBIGUOUS_PARAMETER: SqlState = SqlState::known(idx::E42P08);
    /// `42P09` `ambiguous_alias`.
    pub const AMBIGUOUS_ALIAS: SqlState = SqlState::known(idx::E42P09);
    /// `42P10` `invalid_column_reference`.
    pub const INVALID_COLUMN_REFERENCE: SqlState = SqlState::known(idx::E42P10);
    /// `42611` `invalid_column_definition`.
    pub const INVALID_COLUMN_DEFINITION: SqlState = SqlState::known(idx::E42611);
    /// `42P11` `invalid_cursor_definition`.
    pub const INVALID_CURSOR_DEFINITION: SqlState = SqlState::known(idx::E42P11);
    /// `42P12` `invalid_database_definition`.
    pub const INVALID_DATABASE_DEFINITION: SqlState = SqlState::known(idx::E42P12);
    /// `42P13` `invalid_function_definition`.
    pub const INVALID_FUNCTION_DEFINITION: SqlState = SqlState::known(idx::E42P13);
    /// `42P14` `invalid_prepared_statement_definition`.
    pub const INVALID_PSTATEMENT_DEFINITION: SqlState = SqlState::known(idx::E42P14);
    /// `42P15` `invalid_schema_definition`.
    pub const INVALID_SCHEMA_DEFINITION: SqlState = SqlState::known(idx::E42P15);
    /// `42P16` `invalid_table_definition`.
    pub const INVALID_TABLE_DEFINITION: SqlState = SqlState::known(idx::E42P16);
    /// `42P17` `invalid_object_definition`.
    pub const INVALID_OBJECT_DEFINITION: SqlState = SqlState::known(idx::E42P17);

    // Class 44 - WITH CHECK OPTION Violation
    /// `44000` `with_check_option_violation`.
    pub const WITH_CHECK_OPTION_VIOLATION: SqlState = SqlState::known(idx::E44000);

    // Class 53 - Insufficient Resources
    /// `53000` `insufficient_resources`.
    pub const INSUFFICIENT_RESOURCES: SqlState = SqlState::known(idx::E53000);
    /// `53100` `disk_full`.
    pub const DISK_FULL: SqlState = SqlState::known(idx::E53100);
    /// `53200` `out_of_memory`.
    pub const OUT_OF_MEMORY: SqlState = SqlState::known(idx::E53200);
    /// `53300` `too_many_connections`.
    pub const TOO_MANY_CONNECTIONS: SqlState = SqlState::known(idx::E53300);
    /// `53400` `configuration_limit_exceeded`.
    pub const CONFIGURATION_LIMIT_EXCEEDED: SqlState = SqlState::known(idx::E53400);

    // Class 54 - Program Limit Exceeded
    /// `54000` `program_limit_exceeded`.
    pub const PROGRAM_LIMIT_EXCEEDED: SqlState = SqlState::known(idx::E54000);
    /// `54001` `statement_too_complex`.
    pub const STATEMENT_TOO_COMPLEX: SqlState = SqlState::known(idx::E54001);
    /// `54011` `too_many_columns`.
    pub const TOO_MANY_COLUMNS: SqlState = SqlState::known(idx::E54011);
    /// `54023` `too_many_arguments`.
    pub const TOO_MANY_ARGUMENTS: SqlState = SqlState::known(idx::E54023);

    // Class 55 - Object Not In Prerequisite State
    /// `55000` `object_not_in_prerequisite_state`.
    pub const OBJECT_NOT_IN_PREREQUISITE_STATE: SqlState = SqlState::known(idx::E55000);
    /// `55006` `object_in_use`.
    pub const OBJECT_IN_USE: SqlState = SqlState::known(idx::E55006);
    /// `55P02` `cant_change_runtime_param`.
    pub const CANT_CHANGE_RUNTIME_PARAM: SqlState = SqlState::known(idx::E55P02);
    /// `55P03` `lock_not_available`.
    pub const LOCK_NOT_AVAILABLE: SqlState = SqlState::known(idx::E55P03);
    /// `55P04` `unsafe_new_enum_value_usage`.
    pub const UNSAFE_NEW_ENUM_VALUE_USAGE: SqlState = SqlState::known(idx::E55P04);

    // Class 57 - Operator Intervention
    /// `57000` `operator_intervention`.
    pub const OPERATOR_INTERVENTION: SqlState = SqlState::known(idx::E57000);
    /// `57014` `query_canceled`.
    pub const QUERY_CANCELED: SqlState = SqlState::known(idx::E57014);
    /// `57P01` `admin_shutdown`.
    pub const ADMIN_SHUTDOWN: SqlState = SqlState::known(idx::E57P01);
    /// `57P02` `crash_shutdown`.
    pub const CRASH_SHUTDOWN: SqlState = SqlState::known(idx::E57P02);
    /// `57P03` `cannot_connect_now`.
    pub const CANNOT_CONNECT_NOW: SqlState = SqlState::known(idx::E57P03);
    /// `57P04` `database_dropped`.
    pub const DATABASE_DROPPED: SqlState = SqlState::known(idx::E57P04);
    /// `57P05` `idle_session_timeout`.
    pub const IDLE_SESSION_TIMEOUT: SqlState = SqlState::known(idx::E57P05);

    // Class 58 - System Error (errors external to PostgreSQL itself)
    /// `58000` `system_error`.
    pub const SYSTEM_ERROR: SqlState = SqlState::known(idx::E58000);
    /// `58030` `io_error`.
    pub const IO_ERROR: SqlState = SqlState::known(idx::E58030);
    /// `58P01` `undefined_file`.
    pub const UNDEFINED_FILE: SqlState = SqlState::known(idx::E58P01);
    /// `58P02` `duplicate_file`.
    pub const DUPLICATE_FILE: SqlState = SqlState::known(idx::E58P02);

    // Class 72 - Snapshot Failure
    /// `72000` `snapshot_too_old`.
    pub const SNAPSHOT_TOO_OLD: SqlState = SqlState::known(idx::E72000);

    // Class F0 - Configuration File Error
    /// `F0000` `config_file_error`.
    pub const CONFIG_FILE_ERROR: SqlState = SqlState::known(idx::EF0000);
    /// `F0001` `lock_file_exists`.
    pub const LOCK_FILE_EXISTS: SqlState = SqlState::known(idx::EF0001);

    // Class HV - Foreign Data Wrapper Error (SQL/MED)
    /// `HV000` `fdw_error`.
    pub const FDW_ERROR: SqlState = SqlState::known(idx::EHV000);
    /// `HV005` `fdw_column_name_not_found`.
    pub const FDW_COLUMN_NAME_NOT_FOUND: SqlState = SqlState::known(idx::EHV005);
    /// `HV002` `fdw_dynamic_parameter_value_needed`.
    pub const FDW_DYNAMIC_PARAMETER_VALUE_NEEDED: SqlState = SqlState::known(idx::EHV002);
    /// `HV010` `fdw_function_sequence_error`.
    pub const FDW_FUNCTION_SEQUENCE_ERROR: SqlState = SqlState::known(idx::EHV010);
    /// `HV021` `fdw_inconsistent_descriptor_information`.
    pub const FDW_INCONSISTENT_DESCRIPTOR_INFORMATION: SqlState = SqlState::known(idx::EHV021);
    /// `HV024` `fdw_invalid_attribute_value`.
    pub const FDW_INVALID_ATTRIBUTE_VALUE: SqlState = SqlState::known(idx::EHV024);
    /// `HV007` `fdw_invalid_column_name`.
    pub const FDW_INVALID_COLUMN_NAME: SqlState = SqlState::known(idx::EHV007);
    /// `HV008` `fdw_invalid_column_number`.
    pub const FDW_INVALID_COLUMN_NUMBER: SqlState = SqlState::known(idx::EHV008);
    /// `HV004` `fdw_invalid_data_type`.
    pub const FDW_INVALID_DATA_TYPE: SqlState = SqlState::known(idx::EHV004);
    /// `HV006` `fdw_invalid_data_type_descriptors`.
    pub const FDW_INVALID_DATA_TYPE_DESCRIPTORS: SqlState = SqlState::known(idx::EHV006);
    /// `HV091` `fdw_invalid_descriptor_field_identifier`.
    pub const FDW_INVALID_DESCRIPTOR_FIELD_IDENTIFIER: SqlState = SqlState::known(idx::EHV091);
    /// `HV00B` `fdw_invalid_handle`.
    pub const FDW_INVALID_HANDLE: SqlState = SqlState::known(idx::EHV00B);
    /// `HV00C` `fdw_invalid_option_index`.
    pub const FDW_INVALID_OPTION_INDEX: SqlState = SqlState::known(idx::EHV00C);
    /// `HV00D` `fdw_invalid_option_name`.
    pub const FDW_INVALID_OPTION_NAME: SqlState = SqlState::known(idx::EHV00D);
    /// `HV090` `fdw_invalid_string_length_or_buffer_length`.
    pub const FDW_INVALID_STRING_LENGTH_OR_BUFFER_LENGTH: SqlState = SqlState::known(idx::EHV090);
    /// `HV00A` `fdw_invalid_string_format`.
    pub const FDW_INVALID_STRING_FORMAT: SqlState = SqlState::known(idx::EHV00A);
    /// `HV009` `fdw_invalid_use_of_null_pointer`.
    pub const FDW_INVALID_USE_OF_NULL_POINTER: SqlState = SqlState::known(idx::EHV009);
    /// `HV014` `fdw_too_many_handles`.
    pub const FDW_TOO_MANY_HANDLES: SqlState = SqlState::known(idx::EHV014);
    /// `HV001` `fdw_out_of_memory`.
    pub const FDW_OUT_OF_MEMORY: SqlState = SqlState::known(idx::EHV001);
    /// `HV00P` `fdw_no_schemas`.
    pub const FDW_NO_SCHEMAS: SqlState = SqlState::known(idx::EHV00P);
    /// `HV00J` `fdw_option_name_not_found`.
    pub const FDW_OPTION_NAME_NOT_FOUND: SqlState = SqlState::known(idx::EHV00J);
    /// `HV00K` `fdw_reply_handle`.
    pub const FDW_REPLY_HANDLE: SqlState = SqlState::known(idx::EHV00K);
    /// `HV00Q` `fdw_schema_not_found`.
    pub const FDW_SCHEMA_NOT_FOUND: SqlState = SqlState::known(idx::EHV00Q);
    /// `HV00R` `fdw_table_not_found`.
    pub const FDW_TABLE_NOT_FOUND: SqlState = SqlState::known(idx::EHV00R);
    /// `HV00L` `fdw_unable_to_create_execution`.
    pub const FDW_UNABLE_TO_CREATE_EXECUTION: SqlState = SqlState::known(idx::EHV00L);
    /// `HV00M` `fdw_unable_to_create_reply`.
    pub const FDW_UNABLE_TO_CREATE_REPLY: SqlState = SqlState::known(idx::EHV00M);
    /// `HV00N` `fdw_unable_to_establish_connection`.
    pub const FDW_UNABLE_TO_ESTABLISH_CONNECTION: SqlState = SqlState::known(idx::EHV00N);

    // Class P0 - PL/pgSQL Error
    /// `P0000` `plpgsql_error`.
    pub const PLPGSQL_ERROR: SqlState = SqlState::known(idx::EP0000);
    /// `P0001` `raise_exception`.
    pub const RAISE_EXCEPTION: SqlState = SqlState::known(idx::EP0001);
    /// `P0002` `no_data_found`.
    pub const NO_DATA_FOUND: SqlState = SqlState::known(idx::EP0002);
    /// `P0003` `too_many_rows`.
    pub const TOO_MANY_ROWS: SqlState = SqlState::known(idx::EP0003);
    /// `P0004` `assert_failure`.
    pub const ASSERT_FAILURE: SqlState = SqlState::known(idx::EP0004);

    // Class XX - Internal Error
    /// `XX000` `internal_error`.
    pub const INTERNAL_ERROR: SqlState = SqlState::known(idx::EXX000);
    /// `XX001` `data_corrupted`.
    pub const DATA_CORRUPTED: SqlState = SqlState::known(idx::EXX001);
    /// `XX002` `index_corrupted`.
    pub const INDEX_CORRUPTED: SqlState = SqlState::known(idx::EXX002);
}

/// Indices into `TABLE`, one per distinct code.
mod idx {
    pub(super) const E00000: u16 = 0;
    pub(super) const E01000: u16 = 1;
    pub(super) const E0100C: u16 = 2;
    pub(super) const E01008: u16 = 3;
    pub(super) const E01003: u16 = 4;
    pub(super) const E01007: u16 = 5;
    pub(super) const E01006: u16 = 6;
    pub(super) const E01004: u16 = 7;
    pub(super) const E01P01: u16 = 8;
    pub(super) const E02000: u16 = 9;
    pub(super) const E02001: u16 = 10;
    pub(super) const E03000: u16 = 11;
    pub(super) const E08000: u16 = 12;
    pub(super) const E08003: u16 = 13;
    pub(super) const E08006: u16 = 14;
    pub(super) const E08001: u16 = 15;
    pub(super) const E08004: u16 = 16;
    pub(super) const E08007: u16 = 17;
    pub(super) const E08P01: u16 = 18;
    pub(super) const E09000: u16 = 19;
    pub(super) const E0A000: u16 = 20;
    pub(super) const E0B000: u16 = 21;
    pub(super) const E0F000: u16 = 22;
    pub(super) const E0F001: u16 = 23;
    pub(super) const E0L000: u16 = 24;
    pub(super) const E0LP01: u16 = 25;
    pub(super) const E0P000: u16 = 26;
    pub(super) const E0Z000: u16 = 27;
    pub(super) const E0Z002: u16 = 28;
    pub(super) const E20000: u16 = 29;
    pub(super) const E21000: u16 = 30;
    pub(super) const E22000: u16 = 31;
    pub(super) const E2202E: u16 = 32;
    pub(super) const E22021: u16 = 33;
    pub(super) const E22008: u16 = 34;
    pub(super) const E22012: u16 = 35;
    pub(super) const E22005: u16 = 36;
    pub(super) const E2200B: u16 = 37;
    pub(super) const E22022: u16 = 38;
    pub(super) const E22015: u16 = 39;
    pub(super) const E2201E: u16 = 40;
    pub(super) const E22014: u16 = 41;
    pub(super) const E22016: u16 = 42;
    pub(super) const E2201F: u16 = 43;
    pub(super) const E2201G: u16 = 44;
    pub(super) const E22018: u16 = 45;
    pub(super) const E22007: u16 = 46;
    pub(super) const E22019: u16 = 47;
    pub(super) const E2200D: u16 = 48;
    pub(super) const E22025: u16 = 49;
    pub(super) const E22P06: u16 = 50;
    pub(super) const E22010: u16 = 51;
    pub(super) const E22023: u16 = 52;
    pub(super) const E22013: u16 = 53;
    pub(super) const E2201B: u16 = 54;
    pub(super) const E2201W: u16 = 55;
    pub(super) const E2201X: u16 = 56;
    pub(super) const E2202H: u16 = 57;
    pub(super) const E2202G: u16 = 58;
    pub(super) const E22009: u16 = 59;
    pub(super) const E2200C: u16 = 60;
    pub(super) const E2200G: u16 = 61;
    pub(super) const E22004: u16 = 62;
    pub(super) const E22002: u16 = 63;
    pub(super) const E22003: u16 = 64;
    pub(super) const E2200H: u16 = 65;
    pub(super) const E22026: u16 = 66;
    pub(super) const E22001: u16 = 67;
    pub(super) const E22011: u16 = 68;
    pub(super) const E22027: u16 = 69;
    pub(super) const E22024: u16 = 70;
    pub(super) const E2200F: u16 = 71;
    pub(super) const E22P01: u16 = 72;
    pub(super) const E22P02: u16 = 73;
    pub(super) const E22P03: u16 = 74;
    pub(super) const E22P04: u16 = 75;
    pub(super) const E22P05: u16 = 76;
    pub(super) const E2200L: u16 = 77;
    pub(super) const E2200M: u16 = 78;
    pub(super) const E2200N: u16 = 79;
    pub(super) const E2200S: u16 = 80;
    pub(super) const E2200T: u16 = 81;
    pub(super) const E22030: u16 = 82;
    pub(super) const E22031: u16 = 83;
    pub(super) const E22032: u16 = 84;
    pub(super) const E22033: u16 = 85;
    pub(super) const E22034: u16 = 86;
    pub(super) const E22035: u16 = 87;
    pub(super) const E22036: u16 = 88;
    pub(super) const E22037: u16 = 89;
    pub(super) const E22038: u16 = 90;
    pub(super) const E22039: u16 = 91;
    pub(super) const E2203A: u16 = 92;
    pub(super) const E2203B: u16 = 93;
    pub(super) const E2203C: u16 = 94;
    pub(super) const E2203D: u16 = 95;
    pub(super) const E2203E: u16 = 96;
    pub(super) const E2203F: u16 = 97;
    pub(super) const E2203G: u16 = 98;
    pub(super) const E23000: u16 = 99;
    pub(super) const E23001: u16 = 100;
    pub(super) const E23502: u16 = 101;
    pub(super) const E23503: u16 = 102;
    pub(super) const E23505: u16 = 103;
    pub(super) const E23514: u16 = 104;
    pub(super) const E23P01: u16 = 105;
    pub(super) const E24000: u16 = 106;
    pub(super) const E25000: u16 = 107;
    pub(super) const E25001: u16 = 108;
    pub(super) const E25002: u16 = 109;
    pub(super) const E25008: u16 = 110;
    pub(super) const E25003: u16 = 111;
    pub(super) const E25004: u16 = 112;
    pub(super) const E25005: u16 = 113;
    pub(super) const E25006: u16 = 114;
    pub(super) const E25007: u16 = 115;
    pub(super) const E25P01: u16 = 116;
    pub(super) const E25P02: u16 = 117;
    pub(super) const E25P03: u16 = 118;
    pub(super) const E26000: u16 = 119;
    pub(super) const E27000: u16 = 120;
    pub(super) const E28000: u16 = 121;
    pub(super) const E28P01: u16 = 122;
    pub(super) const E2B000: u16 = 123;
    pub(super) const E2BP01: u16 = 124;
    pub(super) const E2D000: u16 = 125;
    pub(super) const E2F000: u16 = 126;
    pub(super) const E2F005: u16 = 127;
    pub(super) const E2F002: u16 = 128;
    pub(super) const E2F003: u16 = 129;
    pub(super) const E2F004: u16 = 130;
    pub(super) const E34000: u16 = 131;
    pub(super) const E38000: u16 = 132;
    pub(super) const E38001: u16 = 133;
    pub(super) const E38002: u16 = 134;
    pub(super) const E38003: u16 = 135;
    pub(super) const E38004: u16 = 136;
    pub(super) const E39000: u16 = 137;
    pub(super) const E39001: u16 = 138;
    pub(super) const E39004: u16 = 139;
    pub(super) const E39P01: u16 = 140;
    pub(super) const E39P02: u16 = 141;
    pub(super) const E39P03: u16 = 142;
    pub(super) const E3B000: u16 = 143;
    pub(super) const E3B001: u16 = 144;
    pub(super) const E3D000: u16 = 145;
    pub(super) const E3F000: u16 = 146;
    pub(super) const E40000: u16 = 147;
    pub(super) const E40002: u16 = 148;
    pub(super) const E40001: u16 = 149;
    pub(super) const E40003: u16 = 150;
    pub(super) const E40P01: u16 = 151;
    pub(super) const E42000: u16 = 152;
    pub(super) const E42601: u16 = 153;
    pub(super) const E42501: u16 = 154;
    pub(super) const E42846: u16 = 155;
    pub(super) const E42803: u16 = 156;
    pub(super) const E42P20: u16 = 157;
    pub(super) const E42P19: u16 = 158;
    pub(super) const E42830: u16 = 159;
    pub(super) const E42602: u16 = 160;
    pub(super) const E42622: u16 = 161;
    pub(super) const E42939: u16 = 162;
    pub(super) const E42804: u16 = 163;
    pub(super) const E42P18: u16 = 164;
    pub(super) const E42P21: u16 = 165;
    pub(super) const E42P22: u16 = 166;
    pub(super) const E42809: u16 = 167;
    pub(super) const E428C9: u16 = 168;
    pub(super) const E42703: u16 = 169;
    pub(super) const E42883: u16 = 170;
    pub(super) const E42P01: u16 = 171;
    pub(super) const E42P02: u16 = 172;
    pub(super) const E42704: u16 = 173;
    pub(super) const E42701: u16 = 174;
    pub(super) const E42P03: u16 = 175;
    pub(super) const E42P04: u16 = 176;
    pub(super) const E42723: u16 = 177;
    pub(super) const E42P05: u16 = 178;
    pub(super) const E42P06: u16 = 179;
    pub(super) const E42P07: u16 = 180;
    pub(super) const E42712: u16 = 181;
    pub(super) const E42710: u16 = 182;
    pub(super) const E42702: u16 = 183;
    pub(super) const E42725: u16 = 184;
    pub(super) const E42P08: u16 = 185;
    pub(super) const E42P09: u16 = 186;
    pub(super) const E42P10: u16 = 187;
    pub(super) const E42611: u16 = 188;
    pub(super) const E42P11: u16 = 189;
    pub(super) const E42P12: u16 = 190;
    pub(super) const E42P13: u16 = 191;
    pub(super) const E42P14: u16 = 192;
    pub(super) const E42P15: u16 = 193;
    pub(super) const E42P16: u16 = 194;
    pub(super) const E42P17: u16 = 195;
    pub(super) const E44000: u16 = 196;
    pub(super) const E53000: u16 = 197;
    pub(super) const E53100: u16 = 198;
    pub(super) const E53200: u16 = 199;
    pub(super) const E53300: u16 = 200;
    pub(super) const E53400: u16 = 201;
    pub(super) const E54000: u16 = 202;
    pub(super) const E54001: u16 = 203;
    pub(super) const E54011: u16 = 204;
    pub(super) const E54023: u16 = 205;
    pub(super) const E55000: u16 = 206;
    pub(super) const E55006: u16 = 207;
    pub(super) const E55P02: u16 = 208;
    pub(super) const E55P03: u16 = 209;
    pub(super) const E55P04: u16 = 210;
    pub(super) const E57000: u16 = 211;
    pub(super) const E57014: u16 = 212;
    pub(super) const E57P01: u16 = 213;
    pub(super) const E57P02: u16 = 214;
    pub(super) const E57P03: u16 = 215;
    pub(super) const E57P04: u16 = 216;
    pub(super) const E57P05: u16 = 217;
    pub(super) const E58000: u16 = 218;
    pub(super) const E58030: u16 = 219;
    pub(super) const E58P01: u16 = 220;
    pub(super) const E58P02: u16 = 221;
    pub(super) const E72000: u16 = 222;
    pub(super) const EF0000: u16 = 223;
    pub(super) const EF0001: u16 = 224;
    pub(super) const EHV000: u16 = 225;
    pub(super) const EHV005: u16 = 226;
    pub(super) const EHV002: u16 = 227;
    pub(super) const EHV010: u16 = 228;
    pub(super) const EHV021: u16 = 229;
    pub(super) const EHV024: u16 = 230;
    pub(super) const EHV007: u16 = 231;
    pub(super) const EHV008: u16 = 232;
    pub(super) const EHV004: u16 = 233;
    pub(super) const EHV006: u16 = 234;
    pub(super) const EHV091: u16 = 235;
    pub(super) const EHV00B: u16 = 236;
    pub(super) const EHV00C: u16 = 237;
    pub(super) const EHV00D: u16 = 238;
    pub(super) const EHV090: u16 = 239;
    pub(super) const EHV00A: u16 = 240;
    pub(super) const EHV009: u16 = 241;
    pub(super) const EHV014: u16 = 242;
    pub(super) const EHV001: u16 = 243;
    pub(super) const EHV00P: u16 = 244;
    pub(super) const EHV00J: u16 = 245;
    pub(super) const EHV00K: u16 = 246;
    pub(super) const EHV00Q: u16 = 247;
    pub(super) const EHV00R: u16 = 248;
    pub(super) const EHV00L: u16 = 249;
    pub(super) const EHV00M: u16 = 250;
    pub(super) const EHV00N: u16 = 251;
    pub(super) const EP0000: u16 = 252;
    pub(super) const EP0001: u16 = 253;
    pub(super) const EP0002: u16 = 254;
    pub(super) const EP0003: u16 = 255;
    pub(super) const EP0004: u16 = 256;
    pub(super) const EXX000: u16 = 257;
    pub(super) const EXX001: u16 = 258;
    pub(super) const EXX002: u16 = 259;
}

/// Code and condition name of every known code, indexed by `idx`.
static TABLE: [(&str, &str); 260] = [
    ("00000", "successful_completion"),
    ("01000", "warning"),
    ("0100C", "dynamic_result_sets_returned"),
    ("01008", "implicit_zero_bit_padding"),
    ("01003", "null_value_eliminated_in_set_function"),
    ("01007", "privilege_not_granted"),
    ("01006", "privilege_not_revoked"),
    ("01004", "string_data_right_truncation"),
    ("01P01", "deprecated_feature"),
    ("02000", "no_data"),
    ("02001", "no_additional_dynamic_result_sets_returned"),
    ("03000", "sql_statement_not_yet_complete"),
    ("08000", "connection_exception"),
    ("08003", "connection_does_not_exist"),
    ("08006", "connection_failure"),
    ("08001", "sqlclient_unable_to_establish_sqlconnection"),
    ("08004", "sqlserver_rejected_establishment_of_sqlconnection"),
    ("08007", "transaction_resolution_unknown"),
    ("08P01", "protocol_violation"),
    ("09000", "triggered_action_exception"),
    ("0A000", "feature_not_supported"),
    ("0B000", "invalid_transaction_initiation"),
    ("0F000", "locator_exception"),
    ("0F001", "invalid_locator_specification"),
    ("0L000", "invalid_grantor"),
    ("0LP01", "invalid_grant_operation"),
    ("0P000", "invalid_role_specification"),
    ("0Z000", "diagnostics_exception"),
    (
        "0Z002",
        "stacked_diagnostics_accessed_without_active_handler",
    ),
    ("20000", "case_not_found"),
    ("21000", "cardinality_violation"),
    ("22000", "data_exception"),
    ("2202E", "array_subscript_error"),
    ("22021", "character_not_in_repertoire"),
    ("22008", "datetime_field_overflow"),
    ("22012", "division_by_zero"),
    ("22005", "error_in_assignment"),
    ("2200B", "escape_character_conflict"),
    ("22022", "indicator_overflow"),
    ("22015", "interval_field_overflow"),
    ("2201E", "invalid_argument_for_logarithm"),
    ("22014", "invalid_argument_for_ntile_function"),
    ("22016", "invalid_argument_for_nth_value_function"),
    ("2201F", "invalid_argument_for_power_function"),
    ("2201G", "invalid_argument_for_width_bucket_function"),
    ("22018", "invalid_character_value_for_cast"),
    ("22007", "invalid_datetime_format"),
    ("22019", "invalid_escape_character"),
    ("2200D", "invalid_escape_octet"),
    ("22025", "invalid_escape_sequence"),
    ("22P06", "nonstandard_use_of_escape_character"),
    ("22010", "invalid_indicator_parameter_value"),
    ("22023", "invalid_parameter_value"),
    ("22013", "invalid_preceding_or_following_size"),
    ("2201B", "invalid_regular_expression"),
    ("2201W", "invalid_row_count_in_limit_clause"),
    ("2201X", "invalid_row_count_in_result_offset_clause"),
    ("2202H", "invalid_tablesample_argument"),
    ("2202G", "invalid_tablesample_repeat"),
    ("22009", "invalid_time_zone_displacement_value"),
    ("2200C", "invalid_use_of_escape_character"),
    ("2200G", "most_specific_type_mismatch"),
    ("22004", "null_value_not_allowed"),
    ("22002", "null_value_no_indicator_parameter"),
    ("22003", "numeric_value_out_of_range"),
    ("2200H", "sequence_generator_limit_exceeded"),
    ("22026", "string_data_length_mismatch"),
    ("22001", "string_data_right_truncation"),
    ("22011", "substring_error"),
    ("22027", "trim_error"),
    ("22024", "unterminated_c_string"),
    ("2200F", "zero_length_character_string"),
    ("22P01", "floating_point_exception"),
    ("22P02", "invalid_text_representation"),
    ("22P03", "invalid_binary_representation"),
    ("22P04", "bad_copy_file_format"),
    ("22P05", "untranslatable_character"),
    ("2200L", "not_an_xml_document"),
    ("2200M", "invalid_xml_document"),
    ("2200N", "invalid_xml_content"),
    ("2200S", "invalid_xml_comment"),
    ("2200T", "invalid_xml_processing_instruction"),
    ("22030", "duplicate_json_object_key_value"),
    ("22031", "invalid_argument_for_sql_json_datetime_function"),
    ("22032", "invalid_json_text"),
    ("22033", "invalid_sql_json_subscript"),
    ("22034", "more_than_one_sql_json_item"),
    ("22035", "no_sql_json_item"),
    ("22036", "non_numeric_sql_json_item"),
    ("22037", "non_unique_keys_in_a_json_object"),
    ("22038", "singleton_sql_json_item_required"),
    ("22039", "sql_json_array_not_found"),
    ("2203A", "sql_json_member_not_found"),
    ("2203B", "sql_json_number_not_found"),
    ("2203C", "sql_json_object_not_found"),
    ("2203D", "too_many_json_array_elements"),
    ("2203E", "too_many_json_object_members"),
    ("2203F", "sql_json_scalar_required"),
    ("2203G", "sql_json_item_cannot_be_cast_to_target_type"),
    ("23000", "integrity_constraint_violation"),
    ("23001", "restrict_violation"),
    ("23502", "not_null_violation"),
    ("23503", "foreign_key_violation"),
    ("23505", "unique_violation"),
    ("23514", "check_violation"),
    ("23P01", "exclusion_violation"),
    ("24000", "invalid_cursor_state"),
    ("25000", "invalid_transaction_state"),
    ("25001", "active_sql_transaction"),
    ("25002", "branch_transaction_already_active"),
    ("25008", "held_cursor_requires_same_isolation_level"),
    ("25003", "inappropriate_access_mode_for_branch_transaction"),
    (
        "25004",
        "inappropriate_isolation_level_for_branch_transaction",
    ),
    ("25005", "no_active_sql_transaction_for_branch_transaction"),
    ("25006", "read_only_sql_transaction"),
    ("25007", "schema_and_data_statement_mixing_not_supported"),
    ("25P01", "no_active_sql_transaction"),
    ("25P02", "in_failed_sql_transaction"),
    ("25P03", "idle_in_transaction_session_timeout"),
    ("26000", "invalid_sql_statement_name"),
    ("27000", "triggered_data_change_violation"),
    ("28000", "invalid_authorization_specification"),
    ("28P01", "invalid_password"),
    ("2B000", "dependent_privilege_descriptors_still_exist"),
    ("2BP01", "dependent_objects_still_exist"),
    ("2D000", "invalid_transaction_termination"),
    ("2F000", "sql_routine_exception"),
    ("2F005", "function_executed_no_return_statement"),
    ("2F002", "modifying_sql_data_not_permitted"),
    ("2F003", "prohibited_sql_statement_attempted"),
    ("2F004", "reading_sql_data_not_permitted"),
    ("34000", "invalid_cursor_name"),
    ("38000", "external_routine_exception"),
    ("38001", "containing_sql_not_permitted"),
    ("38002", "modifying_sql_data_not_permitted"),
    ("38003", "prohibited_sql_statement_attempted"),
    ("38004", "reading_sql_data_not_permitted"),
    ("39000", "external_routine_invocation_exception"),
    ("39001", "invalid_sqlstate_returned"),
    ("39004", "null_value_not_allowed"),
    ("39P01", "trigger_protocol_violated"),
    ("39P02", "srf_protocol_violated"),
    ("39P03", "event_trigger_protocol_violated"),
    ("3B000", "savepoint_exception"),
    ("3B001", "invalid_savepoint_specification"),
    ("3D000", "invalid_catalog_name"),
    ("3F000", "invalid_schema_name"),
    ("40000", "transaction_rollback"),
    ("40002", "transaction_integrity_constraint_violation"),
    ("40001", "serialization_failure"),
    ("40003", "statement_completion_unknown"),
    ("40P01", "deadlock_detected"),
    ("42000", "syntax_error_or_access_rule_violation"),
    ("42601", "syntax_error"),
    ("42501", "insufficient_privilege"),
    ("42846", "cannot_coerce"),
    ("42803", "grouping_error"),
    ("42P20", "windowing_error"),
    ("42P19", "invalid_recursion"),
    ("42830", "invalid_foreign_key"),
    ("42602", "invalid_name"),
    ("42622", "name_too_long"),
    ("42939", "reserved_name"),
    ("42804", "datatype_mismatch"),
    ("42P18", "indeterminate_datatype"),
    ("42P21", "collation_mismatch"),
    ("42P22", "indeterminate_collation"),
    ("42809", "wrong_object_type"),
    ("428C9", "generated_always"),
    ("42703", "undefined_column"),
    ("42883", "undefined_function"),
    ("42P01", "undefined_table"),
    ("42P02", "undefined_parameter"),
    ("42704", "undefined_object"),
    ("42701", "duplicate_column"),
    ("42P03", "duplicate_cursor"),
    ("42P04", "duplicate_database"),
    ("42723", "duplicate_function"),
    ("42P05", "duplicate_prepared_statement"),
    ("42P06", "duplicate_schema"),
    ("42P07", "duplicate_table"),
    ("42712", "duplicate_alias"),
    ("42710", "duplicate_object"),
    ("42702", "ambiguous_column"),
    ("42725", "ambiguous_function"),
    ("42P08", "ambiguous_parameter"),
    ("42P09", "ambiguous_alias"),
    ("42P10", "invalid_column_reference"),
    ("42611", "invalid_column_definition"),
    ("42P11", "invalid_cursor_definition"),
    ("42P12", "invalid_database_definition"),
    ("42P13", "invalid_function_definition"),
    ("42P14", "invalid_prepared_statement_definition"),
    ("42P15", "invalid_schema_definition"),
    ("42P16", "invalid_table_definition"),
    ("42P17", "invalid_object_definition"),
    ("44000", "with_check_option_violation"),
    ("53000", "insufficient_resources"),
    ("53100", "disk_full"),
    ("53200", "out_of_memory"),
    ("53300", "too_many_connections"),
    ("53400", "configuration_limit_exceeded"),
    ("54000", "program_limit_exceeded"),
    ("54001", "statement_too_complex"),
    ("54011", "too_many_columns"),
    ("54023", "too_many_arguments"),
    ("55000", "object_not_in_prerequisite_state"),
    ("55006", "object_in_use"),
    ("55P02", "cant_change_runtime_param"),
    ("55P03", "lock_not_available"),
    ("55P04", "unsafe_new_enum_value_usage"),
    ("57000", "operator_intervention"),
    ("57014", "query_canceled"),
    ("57P01", "admin_shutdown"),
    ("57P02", "crash_shutdown"),
    ("57P03", "cannot_connect_now"),
    ("57P04", "database_dropped"),
    ("57P05", "idle_session_timeout"),
    ("58000", "system_error"),
    ("58030", "io_error"),
    ("58P01", "undefined_file"),
    ("58P02", "duplicate_file"),
    ("72000", "snapshot_too_old"),
    ("F0000", "config_file_error"),
    ("F0001", "lock_file_exists"),
    ("HV000", "fdw_error"),
    ("HV005", "fdw_column_name_not_found"),
    ("HV002", "fdw_dynamic_parameter_value_needed"),
    ("HV010", "fdw_function_sequence_error"),
    ("HV021", "fdw_inconsistent_descriptor_information"),
    ("HV024", "fdw_invalid_attribute_value"),
    ("HV007", "fdw_invalid_column_name"),
    ("HV008", "fdw_invalid_column_number"),
    ("HV004", "fdw_invalid_data_type"),
    ("HV006", "fdw_invalid_data_type_descriptors"),
    ("HV091", "fdw_invalid_descriptor_field_identifier"),
    ("HV00B", "fdw_invalid_handle"),
    ("HV00C", "fdw_invalid_option_index"),
    ("HV00D", "fdw_invalid_option_name"),
    ("HV090", "fdw_invalid_string_length_or_buffer_length"),
    ("HV00A", "fdw_invalid_string_format"),
    ("HV009", "fdw_invalid_use_of_null_pointer"),
    ("HV014", "fdw_too_many_handles"),
    ("HV001", "fdw_out_of_memory"),
    ("HV00P", "fdw_no_schemas"),
    ("HV00J", "fdw_option_name_not_found"),
    ("HV00K", "fdw_reply_handle"),
    ("HV00Q", "fdw_schema_not_found"),
    ("HV00R", "fdw_table_not_found"),
    ("HV00L", "fdw_unable_to_create_execution"),
    ("HV00M", "fdw_unable_to_create_reply"),
    ("HV00N", "fdw_unable_to_establish_connection"),
    ("P0000", "plpgsql_error"),
    ("P0001", "raise_exception"),
    ("P0002", "no_data_found"),
    ("P0003", "too_many_rows"),
    ("P0004", "assert_failure"),
    ("XX000", "internal_error"),
    ("XX001", "data_corrupted"),
    ("XX002", "index_corrupted"),
];

/// Finds a code in `TABLE`. The byte-string patterns compile to a decision
/// tree over the five bytes.
fn lookup(code: &[u8; 5]) -> Option<u16> {
    let index = match code {
        b"00000" => idx::E00000,
        b"01000" => idx::E01000,
        b"0100C" => idx::E0100C,
        b"01008" => idx::E01008,
        b"01003" => idx::E01003,
        b"01007" => idx::E01007,
        b"01006" => idx::E01006,
        b"01004" => idx::E01004,
        b"01P01" => idx::E01P01,
        b"02000" => idx::E02000,
        b"02001" => idx::E02001,
        b"03000" => idx::E03000,
        b"08000" => idx::E08000,
        b"08003" => idx::E08003,
        b"08006" => idx::E08006,
        b"08001" => idx::E08001,
        b"08004" => idx::E08004,
        b"08007" => idx::E08007,
        b"08P01" => idx::E08P01,
        b"09000" => idx::E09000,
        b"0A000" => idx::E0A000,
        b"0B000" => idx::E0B000,
        b"0F000" => idx::E0F000,
        b"0F001" => idx::E0F001,
        b"0L000" => idx::E0L000,
        b"0LP01" => idx::E0LP01,
        b"0P000" => idx::E0P000,
        b"0Z000" => idx::E0Z000,
        b"0Z002" => idx::E0Z002,
        b"20000" => idx::E20000,
        b"21000" => idx::E21000,
        b"22000" => idx::E22000,
        b"2202E" => idx::E2202E,
        b"22021" => idx::E22021,
        b"22008" => idx::E22008,
        b"22012" => idx::E22012,
        b"22005" => idx::E22005,
        b"2200B" => idx::E2200B,
        b"22022" => idx::E22022,
        b"22015" => idx::E22015,
        b"2201E" => idx::E2201E,
        b"22014" => idx::E22014,
        b"22016" => idx::E22016,
        b"2201F" => idx::E2201F,
        b"2201G" => idx::E2201G,
        b"22018" => idx::E22018,
        b"22007" => idx::E22007,
        b"22019" => idx::E22019,
        b"2200D" => idx::E2200D,
        b"22025" => idx::E22025,
        b"22P06" => idx::E22P06,
        b"22010" => idx::E22010,
        b"22023" => idx::E22023,
        b"22013" => idx::E22013,
        b"2201B" => idx::E2201B,
        b"2201W" => idx::E2201W,
        b"2201X" => idx::E2201X,
        b"2202H" => idx::E2202H,
        b"2202G" => idx::E2202G,
        b"22009" => idx::E22009,
        b"2200C" => idx::E2200C,
        b"2200G" => idx::E2200G,
        b"22004" => idx::E22004,
        b"22002" => idx::E22002,
        b"22003" => idx::E22003,
        b"2200H" => idx::E2200H,
        b"22026" => idx::E22026,
        b"22001" => idx::E22001,
        b"22011" => idx::E22011,
        b"22027" => idx::E22027,
        b"22024" => idx::E22024,
        b"2200F" => idx::E2200F,
        b"22P01" => idx::E22P01,
        b"22P02" => idx::E22P02,
        b"22P03" => idx::E22P03,
        b"22P04" => idx::E22P04,
        b"22P05" => idx::E22P05,
        b"2200L" => idx::E2200L,
        b"2200M" => idx::E2200M,
        b"2200N" => idx::E2200N,
        b"2200S" => idx::E2200S,
        b"2200T" => idx::E2200T,
        b"22030" => idx::E22030,
        b"22031" => idx::E22031,
        b"22032" => idx::E22032,
        b"22033" => idx::E22033,
        b"22034" => idx::E22034,
        b"22035" => idx::E22035,
        b"22036" => idx::E22036,
        b"22037" => idx::E22037,
        b"22038" => idx::E22038,
        b"22039" => idx::E22039,
        b"2203A" => idx::E2203A,
        b"2203B" => idx::E2203B,
        b"2203C" => idx::E2203C,
        b"2203D" => idx::E2203D,
        b"2203E" => idx::E2203E,
        b"2203F" => idx::E2203F,
        b"2203G" => idx::E2203G,
        b"23000" => idx::E23000,
        b"23001" => idx::E23001,
        b"23502" => idx::E23502,
        b"23503" => idx::E23503,
        b"23505" => idx::E23505,
        b"23514" => idx::E23514,
        b"23P01" => idx::E23P01,
        b"24000" => idx::E24000,
        b"25000" => idx::E25000,
        b"25001" => idx::E25001,
        b"25002" => idx::E25002,
        b"25008" => idx::E25008,
        b"25003" => idx::E25003,
        b"25004" => idx::E25004,
        b"25005" => idx::E25005,
        b"25006" => idx::E25006,
        b"25007" => idx::E25007,
        b"25P01" => idx::E25P01,
        b"25P02" => idx::E25P02,
        b"25P03" => idx::E25P03,
        b"26000" => idx::E26000,
        b"27000" => idx::E27000,
        b"28000" => idx::E28000,
        b"28P01" => idx::E28P01,
        b"2B000" => idx::E2B000,
        b"2BP01" => idx::E2BP01,
        b"2D000" => idx::E2D000,
        b"2F000" => idx::E2F000,
        b"2F005" => idx::E2F005,
        b"2F002" => idx::E2F002,
        b"2F003" => idx::E2F003,
        b"2F004" => idx::E2F004,
        b"34000" => idx::E34000,
        b"38000" => idx::E38000,
        b"38001" => idx::E38001,
        b"38002" => idx::E38002,
        b"38003" => idx::E38003,
        b"38004" => idx::E38004,
        b"39000" => idx::E39000,
        b"39001" => idx::E39001,
        b"39004" => idx::E39004,
        b"39P01" => idx::E39P01,
        b"39P02" => idx::E39P02,
        b"39P03" => idx::E39P03,
        b"3B000" => idx::E3B000,
        b"3B001" => idx::E3B001,
        b"3D000" => idx::E3D000,
        b"3F000" => idx::E3F000,
        b"40000" => idx::E40000,
        b"40002" => idx::E40002,
        b"40001" => idx::E40001,
        b"40003" => idx::E40003,
        b"40P01" => idx::E40P01,
        b"42000" => idx::E42000,
        b"42601" => idx::E42601,
        b"42501" => idx::E42501,
        b"42846" => idx::E42846,
        b"42803" => idx::E42803,
        b"42P20" => idx::E42P20,
        b"42P19" => idx::E42P19,
        b"42830" => idx::E42830,
        b"42602" => idx::E42602,
        b"42622" => idx::E42622,
        b"42939" => idx::E42939,
        b"42804" => idx::E42804,
        b"42P18" => idx::E42P18,
        b"42P21" => idx::E42P21,
        b"42P22" => idx::E42P22,
        b"42809" => idx::E42809,
        b"428C9" => idx::E428C9,
        b"42703" => idx::E42703,
        b"42883" => idx::E42883,
        b"42P01" => idx::E42P01,
        b"42P02" => idx::E42P02,
        b"42704" => idx::E42704,
        b"42701" => idx::E42701,
        b"42P03" => idx::E42P03,
        b"42P04" => idx::E42P04,
        b"42723" => idx::E42723,
        b"42P05" => idx::E42P05,
        b"42P06" => idx::E42P06,
        b"42P07" => idx::E42P07,
        b"42712" => idx::E42712,
        b"42710" => idx::E42710,
        b"42702" => idx::E42702,
        b"42725" => idx::E42725,
        b"42P08" => idx::E42P08,
        b"42P09" => idx::E42P09,
        b"42P10" => idx::E42P10,
        b"42611" => idx::E42611,
        b"42P11" => idx::E42P11,
        b"42P12" => idx::E42P12,
        b"42P13" => idx::E42P13,
        b"42P14" => idx::E42P14,
        b"42P15" => idx::E42P15,
        b"42P16" => idx::E42P16,
        b"42P17" => idx::E42P17,
        b"44000" => idx::E44000,
        b"53000" => idx::E53000,
        b"53100" => idx::E53100,
        b"53200" => idx::E53200,
        b"53300" => idx::E53300,
        b"53400" => idx::E53400,
        b"54000" => idx::E54000,
        b"54001" => idx::E54001,
        b"54011" => idx::E54011,
        b"54023" => idx::E54023,
        b"55000" => idx::E55000,
        b"55006" => idx::E55006,
        b"55P02" => idx::E55P02,
        b"55P03" => idx::E55P03,
        b"55P04" => idx::E55P04,
        b"57000" => idx::E57000,
        b"57014" => idx::E57014,
        b"57P01" => idx::E57P01,
        b"57P02" => idx::E57P02,
        b"57P03" => idx::E57P03,
        b"57P04" => idx::E57P04,
        b"57P05" => idx::E57P05,
        b"58000" => idx::E58000,
        b"58030" => idx::E58030,
        b"58P01" => idx::E58P01,
        b"58P02" => idx::E58P02,
        b"72000" => idx::E72000,
        b"F0000" => idx::EF0000,
        b"F0001" => idx::EF0001,
        b"HV000" => idx::EHV000,
        b"HV005" => idx::EHV005,
        b"HV002" => idx::EHV002,
        b"HV010" => idx::EHV010,
        b"HV021" => idx::EHV021,
        b"HV024" => idx::EHV024,
        b"HV007" => idx::EHV007,
        b"HV008" => idx::EHV008,
        b"HV004" => idx::EHV004,
        b"HV006" => idx::EHV006,
        b"HV091" => idx::EHV091,
        b"HV00B" => idx::EHV00B,
        b"HV00C" => idx::EHV00C,
        b"HV00D" => idx::EHV00D,
        b"HV090" => idx::EHV090,
        b"HV00A" => idx::EHV00A,
        b"HV009" => idx::EHV009,
        b"HV014" => idx::EHV014,
        b"HV001" => idx::EHV001,
        b"HV00P" => idx::EHV00P,
        b"HV00J" => idx::EHV00J,
        b"HV00K" => idx::EHV00K,
        b"HV00Q" => idx::EHV00Q,
        b"HV00R" => idx::EHV00R,
        b"HV00L" => idx::EHV00L,
        b"HV00M" => idx::EHV00M,
        b"HV00N" => idx::EHV00N,
        b"P0000" => idx::EP0000,
        b"P0001" => idx::EP0001,
        b"P0002" => idx::EP0002,
        b"P0003" => idx::EP0003,
        b"P0004" => idx::EP0004,
        b"XX000" => idx::EXX000,
        b"XX001" => idx::EXX001,
        b"XX002" => idx::EXX002,
        _ => return None,
    };
    Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    fn hash(s: &SqlState) -> u64 {
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    }

    #[test]
    fn round_trips() {
        for code in [
            "00000", "01004", "0100C", "22001", "23505", "40001", "40P01", "42P01", "HV00N",
            "XX002",
        ] {
            let s = SqlState::from_code(code);
            assert_eq!(s.code(), code);
            assert!(s.name().is_some(), "{code} should be known");
            assert_eq!(SqlState::from_code(s.code()), s);
        }
    }

    #[test]
    fn table_is_consistent() {
        for (i, (code, name)) in TABLE.iter().enumerate() {
            let s = SqlState::from_code(code);
            assert_eq!(s, SqlState::known(i as u16), "{code}");
            assert_eq!(s.code(), *code);
            assert_eq!(s.name(), Some(*name));
            assert_eq!(code.len(), 5);
        }
        let mut codes: Vec<&str> = TABLE.iter().map(|(c, _)| *c).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), TABLE.len(), "duplicate code in TABLE");
    }

    #[test]
    fn names() {
        assert_eq!(SqlState::UNIQUE_VIOLATION.name(), Some("unique_violation"));
        assert_eq!(
            SqlState::T_R_SERIALIZATION_FAILURE.name(),
            Some("serialization_failure")
        );
        assert_eq!(
            SqlState::INVALID_ARGUMENT_FOR_LOG.name(),
            Some("invalid_argument_for_logarithm")
        );
        assert_eq!(
            SqlState::ARRAY_ELEMENT_ERROR.name(),
            Some("array_subscript_error")
        );
        assert_eq!(
            SqlState::WARNING_STRING_DATA_RIGHT_TRUNCATION.name(),
            SqlState::STRING_DATA_RIGHT_TRUNCATION.name()
        );
        assert_eq!(SqlState::from_code("ZZ999").name(), None);
    }

    #[test]
    fn classes() {
        assert_eq!(SqlState::UNIQUE_VIOLATION.class(), "23");
        assert_eq!(SqlState::FEATURE_NOT_SUPPORTED.class(), "0A");
        assert_eq!(SqlState::from_code("ZZ999").class(), "ZZ");
        assert_eq!(SqlState::from_code("abcdefg").class(), "ab");
        assert_eq!(SqlState::from_code("X").class(), "X");
        assert_eq!(SqlState::from_code("").class(), "");
        assert_eq!(SqlState::from_code("\u{e9}x").class(), "\u{e9}");
    }

    #[test]
    fn unknown_code_is_kept_inline() {
        let s = SqlState::from_code("ZZ999");
        assert_eq!(s.0, Inner::Unknown(*b"ZZ999"));
        assert_eq!(s.code(), "ZZ999");
        assert_eq!(s, SqlState::from_code("ZZ999"));
        assert_ne!(s, SqlState::from_code("ZZ998"));
        // Lookups are case-sensitive, as SQLSTATEs are upper case.
        assert_eq!(SqlState::from_code("42p01").name(), None);
        assert_ne!(SqlState::from_code("42p01"), SqlState::UNDEFINED_TABLE);
    }

    #[test]
    fn malformed_code_is_kept() {
        for code in [
            "",
            "2350",
            "235050",
            "23 05",
            "not a sqlstate",
            "\u{e9}\u{e9}x",
        ] {
            let s = SqlState::from_code(code);
            assert!(matches!(s.0, Inner::Other(_)), "{code:?}");
            assert_eq!(s.code(), code);
            assert_eq!(s.name(), None);
            assert_eq!(s, SqlState::from_code(code));
        }
    }

    #[test]
    fn constants_equal_parsed_values() {
        assert_eq!(SqlState::from_code("23505"), SqlState::UNIQUE_VIOLATION);
        assert_eq!(SqlState::from("40001"), SqlState::T_R_SERIALIZATION_FAILURE);
        assert_eq!(
            SqlState::from_code("01004"),
            SqlState::WARNING_STRING_DATA_RIGHT_TRUNCATION
        );
        assert_eq!(
            SqlState::from_code("22001"),
            SqlState::STRING_DATA_RIGHT_TRUNCATION
        );
        assert_ne!(
            SqlState::WARNING_STRING_DATA_RIGHT_TRUNCATION,
            SqlState::STRING_DATA_RIGHT_TRUNCATION
        );
        assert_eq!(SqlState::UNDEFINED_CURSOR, SqlState::INVALID_CURSOR_NAME);
        assert_eq!(
            SqlState::ARRAY_ELEMENT_ERROR,
            SqlState::ARRAY_SUBSCRIPT_ERROR
        );
        assert_eq!(
            hash(&SqlState::from_code("23505")),
            hash(&SqlState::UNIQUE_VIOLATION)
        );
        assert_ne!(SqlState::UNIQUE_VIOLATION, SqlState::FOREIGN_KEY_VIOLATION);
    }

    #[test]
    fn formats() {
        assert_eq!(
            format!("{:?}", SqlState::UNIQUE_VIOLATION),
            "SqlState(23505 unique_violation)"
        );
        assert_eq!(format!("{}", SqlState::UNIQUE_VIOLATION), "23505");
        assert_eq!(
            format!("{:?}", SqlState::from_code("ZZ999")),
            "SqlState(ZZ999)"
        );
        assert_eq!(format!("{}", SqlState::from_code("ZZ999")), "ZZ999");
        assert_eq!(
            format!("{:?}", SqlState::from_code("bad")),
            "SqlState(\"bad\")"
        );
        assert_eq!(format!("{}", SqlState::from_code("bad")), "bad");
    }

    /// The table holds every code of the installed server's errcodes.txt
    /// (the list it is generated from) under its condition name.
    #[test]
    fn every_code_of_the_servers_errcodes_txt_is_known() {
        let path = std::path::Path::new("/usr/share/postgresql/15/errcodes.txt");
        let Ok(list) = std::fs::read_to_string(path) else {
            eprintln!(
                "{} not found: the table is not checked against it",
                path.display()
            );
            return;
        };
        let mut codes = std::collections::HashSet::new();
        for line in list.lines().filter(|l| !l.starts_with('#')) {
            let parts: Vec<&str> = line.split_whitespace().collect();
            if parts.len() < 3 || !parts[2].starts_with("ERRCODE_") {
                continue;
            }
            codes.insert(parts[0]);
            let known = SqlState::from_code(parts[0]);
            assert!(known.name().is_some(), "{line}");
            if let Some(&name) = parts.get(3) {
                assert_eq!(known.name(), Some(name), "{line}");
            }
        }
        assert_eq!(codes.len(), TABLE.len());
    }

    #[test]
    fn is_small() {
        assert!(std::mem::size_of::<SqlState>() <= 3 * std::mem::size_of::<usize>());
    }
}
