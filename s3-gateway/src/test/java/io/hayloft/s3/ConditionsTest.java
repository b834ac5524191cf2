package io.hayloft.s3;

import static io.hayloft.s3.Conditions.Outcome.NOT_MODIFIED;
import static io.hayloft.s3.Conditions.Outcome.PRECONDITION_FAILED;
import static io.hayloft.s3.Conditions.Outcome.PROCEED;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** S3's precedence of If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since. */
class ConditionsTest {
    private static final String ETAG = "0123abcd";
    /** Wed, 21 Oct 2015 07:28:00 GMT, and half a second more (compared to the second). */
    private static final long MODIFIED = 1_445_412_480_500L;
    private static final String AT = "Wed, 21 Oct 2015 07:28:00 GMT";
    private static final String BEFORE = "Wed, 21 Oct 2015 07:27:59 GMT";
    private static final String AFTER = "Wed, 21 Oct 2015 07:28:01 GMT";

    private static Conditions.Outcome eval(String ifMatch, String ifNoneMatch, String ifModifiedSince, String ifUnmodifiedSince) {
        return Conditions.evaluate(ifMatch, ifNoneMatch, ifModifiedSince, ifUnmodifiedSince, ETAG, MODIFIED);
    }

    @Test
    void eachAlone() {
        assertThat(eval(null, null, null, null)).isEqualTo(PROCEED);
        assertThat(eval("\"0123abcd\"", null, null, null)).isEqualTo(PROCEED);
        assertThat(eval("*", null, null, null)).isEqualTo(PROCEED);
        assertThat(eval("\"x\", \"0123abcd\"", null, null, null)).isEqualTo(PROCEED);
        assertThat(eval("\"other\"", null, null, null)).isEqualTo(PRECONDITION_FAILED);
        assertThat(eval(null, "\"0123abcd\"", null, null)).isEqualTo(NOT_MODIFIED);
        assertThat(eval(null, "W/\"0123abcd\"", null, null)).isEqualTo(NOT_MODIFIED);
        assertThat(eval(null, "*", null, null)).isEqualTo(NOT_MODIFIED);
        assertThat(eval(null, "\"other\"", null, null)).isEqualTo(PROCEED);
        assertThat(eval(null, null, AT, null)).isEqualTo(NOT_MODIFIED);
        assertThat(eval(null, null, AFTER, null)).isEqualTo(NOT_MODIFIED);
        assertThat(eval(null, null, BEFORE, null)).isEqualTo(PROCEED);
        assertThat(eval(null, null, null, AT)).isEqualTo(PROCEED);
        assertThat(eval(null, null, null, AFTER)).isEqualTo(PROCEED);
        assertThat(eval(null, null, null, BEFORE)).isEqualTo(PRECONDITION_FAILED);
    }

    @Test
    void ifMatchTrueOverridesIfUnmodifiedSinceFalse() {
        assertThat(eval("\"0123abcd\"", null, null, BEFORE)).isEqualTo(PROCEED);
        assertThat(eval("\"other\"", null, null, AFTER)).isEqualTo(PRECONDITION_FAILED);
    }

    @Test
    void ifNoneMatchFalseWithIfModifiedSinceTrueIsNotModified() {
        // If-None-Match false (the ETag matches) decides: 304, whatever If-Modified-Since says
        assertThat(eval(null, "\"0123abcd\"", BEFORE, null)).isEqualTo(NOT_MODIFIED);
        // If-None-Match true (another ETag) decides: the object is sent even though not modified since
        assertThat(eval(null, "\"other\"", AFTER, null)).isEqualTo(PROCEED);
    }

    @Test
    void preconditionFailureComesBeforeNotModified() {
        assertThat(eval("\"other\"", "\"0123abcd\"", null, null)).isEqualTo(PRECONDITION_FAILED);
        assertThat(eval(null, "\"0123abcd\"", null, BEFORE)).isEqualTo(PRECONDITION_FAILED);
    }

    @Test
    void unparseableDatesAreIgnoredAndOtherFormatsRead() {
        assertThat(eval(null, null, "yesterday", "not a date")).isEqualTo(PROCEED);
        assertThat(Conditions.parseDate("Wednesday, 21-Oct-15 07:28:00 GMT")).isEqualTo(1_445_412_480L);
        assertThat(Conditions.parseDate("Wed Oct 21 07:28:00 2015")).isEqualTo(1_445_412_480L);
        assertThat(Conditions.httpDate(MODIFIED)).isEqualTo(AT);
        assertThat(Conditions.httpDate(0)).isEqualTo("Thu, 01 Jan 1970 00:00:00 GMT");
    }
}
