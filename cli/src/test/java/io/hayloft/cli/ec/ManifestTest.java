package io.hayloft.cli.ec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.erasure.CodecKind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestTest {

    @TempDir
    Path tmp;

    private static Manifest sample(long length) {
        StripeLayout l = new StripeLayout(3, 2, 100, length);
        List<Manifest.Block> blocks = new ArrayList<>();
        for (long s = 0; s < l.stripes(); s++) {
            for (int u = 0; u < 5; u++) {
                if (l.hasFile(s, u)) {
                    blocks.add(new Manifest.Block(l.fileName(s, u), s, u, u < 3, l.storedLength(s, u), (int) (s * 5 + u)
                            * 0x9E3779B9));
                }
            }
        }
        return new Manifest(CodecKind.HH_NONXOR, l, 0xCAFEBABE, "x.bin", blocks);
    }

    @Test
    void layoutPadsLogically() {
        StripeLayout l = new StripeLayout(3, 2, 100, 350);
        assertThat(l.stripes()).isEqualTo(2);
        assertThat(l.storedLength(1, 0)).isEqualTo(50);
        assertThat(l.hasFile(1, 1)).isFalse();
        assertThat(l.hasFile(1, 2)).isFalse();
        assertThat(l.storedLength(1, 3)).isEqualTo(100);
        assertThat(l.fileName(1, 4)).isEqualTo("s000001-p01.blk");
        assertThat(new StripeLayout(3, 2, 100, 0).stripes()).isZero();
        assertThat(new StripeLayout(3, 2, 100, 300).stripes()).isOne();
    }

    @Test
    void writesAtomicallyAndReadsBack() throws IOException {
        Manifest m = sample(350);
        m.write(tmp);
        assertThat(tmp.resolve("manifest.json.tmp")).doesNotExist();
        Manifest back = Manifest.read(tmp);
        assertThat(back.toJson()).isEqualTo(m.toJson());
        assertThat(back.blocks()).isEqualTo(m.blocks());
        assertThat(back.fileCrc32c()).isEqualTo(0xCAFEBABE);
        assertThat(back.block(1, 1)).isNull();
        assertThat(new String(m.toJson(), StandardCharsets.UTF_8)).contains("\"role\" : \"parity\"",
                "\"crc32c\" : \"", "\"format\" : \"hayloft-ec-manifest\"");
    }

    @Test
    void refusesInconsistentBlockLists() {
        Manifest m = sample(350);
        List<Manifest.Block> missingOne = new ArrayList<>(m.blocks());
        missingOne.remove(2);
        assertThatThrownBy(() -> new Manifest(CodecKind.RS, m.layout(), 0, "", missingOne))
                .hasMessageContaining("s000000-d02.blk is not listed");
        List<Manifest.Block> twice = new ArrayList<>(m.blocks());
        twice.add(twice.get(0));
        assertThatThrownBy(() -> new Manifest(CodecKind.RS, m.layout(), 0, "", twice))
                .hasMessageContaining("listed twice");
        assertThatThrownBy(() -> new Manifest(CodecKind.HH_XOR, new StripeLayout(3, 2, 101, 10), 0, "", List.of()))
                .hasMessageContaining("block size 101 is odd");
    }

    @Test
    void refusesOtherFormatsAndGarbage() throws IOException {
        String json = new String(sample(350).toJson(), StandardCharsets.UTF_8);
        assertThatThrownBy(() -> Manifest.parse(json.replace("hayloft-ec-manifest", "other").getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("format is 'other'");
        assertThatThrownBy(() -> Manifest.parse("[]".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("not a JSON object");
        assertThatThrownBy(() -> Manifest.parse(json.replaceFirst("\"crc32c\" : \"[0-9a-f]{8}\"", "\"crc32c\" : \"xyz\"")
                .getBytes(StandardCharsets.UTF_8))).hasMessageContaining("not 8 lowercase hex digits");
        assertThatThrownBy(() -> Manifest.parse(json.replace("\"stripes\" : 2", "\"stripes\" : 3")
                .getBytes(StandardCharsets.UTF_8))).hasMessageContaining("stripes is 3");
    }
}
