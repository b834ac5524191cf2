package io.hayloft.format.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class WireTest {

    @Test
    void photoIdsRoundTripAndRejectGarbage() {
        PhotoId id = new PhotoId(3, 1234, 2, 0x8f3a1b2c3d4e5f60L);
        assertThat(id.toString()).isEqualTo("3,1234,2,8f3a1b2c3d4e5f60");
        assertThat(PhotoId.parse(id.toString())).isEqualTo(id);
        assertThat(PhotoId.parse("3,1234,2,ffffffffffffffff").cookie()).isEqualTo(-1L);
        assertThat(id.needlePath()).isEqualTo("/3/1234/2?cookie=8f3a1b2c3d4e5f60");
        // Alternate keys span the 32-bit range; stores take them as unsigned decimals (found by the chaos checker).
        assertThat(id.withAlt(-1).needlePath()).isEqualTo("/3/1234/4294967295?cookie=8f3a1b2c3d4e5f60");
        assertThat(id.withAlt(Integer.MIN_VALUE).needlePath()).isEqualTo("/3/1234/2147483648?cookie=8f3a1b2c3d4e5f60");
        assertThatThrownBy(() -> PhotoId.parse("3,1234")).hasMessageContaining("expected volume,key,alt,cookie");
        assertThatThrownBy(() -> PhotoId.parse("x,1,2,3")).hasMessageContaining("malformed photo id 'x,1,2,3'");
        assertThatThrownBy(() -> PhotoId.parse("0,1,2,3")).hasMessageContaining("volume must be >= 1, was 0");
    }

    @Test
    void writeTokensBindVolumeKeyAndTime() {
        WriteToken t = new WriteToken("0123456789abcdef-secret");
        String token = t.sign(3, 99, 2, 10_000);
        assertThat(t.check(token, 3, 99, 9_999)).isNull();
        assertThat(t.check(token, 3, 100, 9_999)).isNull();
        assertThat(t.check(token, 3, 101, 9_999)).isEqualTo("write token covers keys 99..100, not key 101");
        assertThat(t.check(token, 3, 98, 9_999)).contains("not key 98");
        assertThat(t.check(token, 4, 99, 9_999)).isEqualTo("write token is not valid for volume 4");
        assertThat(t.check(token.replace(".2.", ".3."), 3, 99, 9_999)).contains("not valid");
        assertThat(t.check(token, 3, 99, 10_001)).isEqualTo("write token expired");
        assertThat(t.check("garbage", 3, 99, 0)).isEqualTo("malformed write token");
        assertThat(t.check(null, 3, 99, 0)).isEqualTo("missing write token");
        assertThat(new WriteToken("another-secret-0123").check(token, 3, 99, 0)).contains("not valid");
        assertThatThrownBy(() -> new WriteToken("short")).hasMessageContaining("at least 16");
    }
}
