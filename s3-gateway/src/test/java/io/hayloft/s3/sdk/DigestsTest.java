package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The suite's own reference values are right: published check values and S3's documented examples. */
class DigestsTest {
    private static final byte[] CHECK = "123456789".getBytes(StandardCharsets.US_ASCII);

    @Test
    void crcCheckValues() {
        assertThat(Digests.crc64nvmeValue(CHECK)).isEqualTo(0xae8b14860a799888L);
        assertThat(Digests.crc32(CHECK)).isEqualTo(Digests.b64(new byte[] {(byte) 0xcb, (byte) 0xf4, 0x39, 0x26}));
        assertThat(Digests.crc32c(CHECK)).isEqualTo(Digests.b64(new byte[] {(byte) 0xe3, 0x06, (byte) 0x92, (byte) 0x83}));
        assertThat(Digests.crc64nvme(new byte[0])).isEqualTo("AAAAAAAAAAA=");
    }

    @Test
    void etags() {
        assertThat(Digests.etag(new byte[0])).isEqualTo("\"d41d8cd98f00b204e9800998ecf8427e\"");
        // One empty part: md5 of md5("") then -1.
        assertThat(Digests.multipartEtag(List.of(new byte[0]))).isEqualTo("\"59adb24ef3cdbe0297f05b395827453f-1\"");
        assertThat(Digests.composite("CRC32", List.of(CHECK, CHECK))).endsWith("-2");
    }
}
