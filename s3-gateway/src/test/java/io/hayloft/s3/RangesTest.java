package io.hayloft.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Every form of Range, its boundaries, malformed ones (ignored: the whole object) and a 0-byte object. */
class RangesTest {

    private static void invalid(String header, long size) {
        assertThatThrownBy(() -> Ranges.parse(header, size)).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.INVALID_RANGE));
    }

    @Test
    void firstLast() {
        Ranges.Range r = Ranges.parse("bytes=0-0", 10);
        assertThat(r).isEqualTo(new Ranges.Range(0, 0, 10));
        assertThat(r.length()).isEqualTo(1);
        assertThat(r.contentRange()).isEqualTo("bytes 0-0/10");
        assertThat(Ranges.parse("bytes=2-5", 10)).isEqualTo(new Ranges.Range(2, 5, 10));
        assertThat(Ranges.parse("bytes=9-9", 10)).isEqualTo(new Ranges.Range(9, 9, 10));
        assertThat(Ranges.parse("bytes=5-100", 10)).isEqualTo(new Ranges.Range(5, 9, 10)); // clamped
        assertThat(Ranges.parse(" Bytes = 1-2 ", 10)).isNull(); // "Bytes =" is not the unit
        assertThat(Ranges.parse("bytes= 1 - 2 ", 10)).isEqualTo(new Ranges.Range(1, 2, 10));
        invalid("bytes=10-20", 10);
        invalid("bytes=10-", 10);
    }

    @Test
    void openEndedAndSuffix() {
        assertThat(Ranges.parse("bytes=3-", 10)).isEqualTo(new Ranges.Range(3, 9, 10));
        assertThat(Ranges.parse("bytes=0-", 1)).isEqualTo(new Ranges.Range(0, 0, 1));
        assertThat(Ranges.parse("bytes=-3", 10)).isEqualTo(new Ranges.Range(7, 9, 10));
        assertThat(Ranges.parse("bytes=-10", 10)).isEqualTo(new Ranges.Range(0, 9, 10));
        assertThat(Ranges.parse("bytes=-11", 10)).isEqualTo(new Ranges.Range(0, 9, 10));
        invalid("bytes=-0", 10);
    }

    @Test
    void anEmptyObjectSatisfiesNoRange() {
        invalid("bytes=0-", 0);
        invalid("bytes=0-0", 0);
        invalid("bytes=-1", 0);
        assertThat(Ranges.parse(null, 0)).isNull();
    }

    @Test
    void malformedRangesAreIgnored() {
        for (String h : new String[] {"bytes=5-2", "bytes=a-b", "bytes=", "bytes=-", "items=0-1", "bytes=0-1,3-4", "0-1",
                "bytes=1-2-3", "bytes=99999999999999999999-", "bytes=--1", "bytes=+1-2"}) {
            assertThat(Ranges.parse(h, 10)).as(h).isNull();
        }
    }

    @Test
    void copySourceRange() {
        assertThat(Ranges.copyRange("bytes=0-9", 10)).isEqualTo(new Ranges.Range(0, 9, 10));
        assertThatThrownBy(() -> Ranges.copyRange("bytes=0-10", 10)).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.INVALID_RANGE));
        assertThatThrownBy(() -> Ranges.copyRange("bytes=5-", 10)).isInstanceOf(S3Exception.class);
        assertThatThrownBy(() -> Ranges.copyRange("bytes=5-4", 10)).isInstanceOf(S3Exception.class);
        assertThatThrownBy(() -> Ranges.copyRange("0-4", 10)).isInstanceOf(S3Exception.class);
    }
}
