package io.hayloft.cli.ec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SizeConverterTest {

    @Test
    void parsesBinaryUnits() {
        assertThat(SizeConverter.parse("4096")).isEqualTo(4096);
        assertThat(SizeConverter.parse("4k")).isEqualTo(4096);
        assertThat(SizeConverter.parse("4K")).isEqualTo(4096);
        assertThat(SizeConverter.parse("4KiB")).isEqualTo(4096);
        assertThat(SizeConverter.parse("256m")).isEqualTo(256L << 20);
        assertThat(SizeConverter.parse("16MB")).isEqualTo(16L << 20);
        assertThat(SizeConverter.parse(" 1g ")).isEqualTo(1L << 30);
        assertThat(SizeConverter.parse("2t")).isEqualTo(2L << 40);
        assertThat(SizeConverter.parse("0")).isZero();
    }

    @Test
    void rejectsGarbageNamingIt() {
        for (String bad : new String[] {"", "m", "12q", "-4k", "1.5m", "k4", "4 k", "0x10"}) {
            assertThatThrownBy(() -> SizeConverter.parse(bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("size");
        }
        assertThatThrownBy(() -> SizeConverter.parse("99999999999999999999"))
                .hasMessageContaining("too large");
        assertThatThrownBy(() -> SizeConverter.parse("9999999999t")).hasMessageContaining("too large");
    }

    @Test
    void formatsForPeople() {
        assertThat(SizeConverter.format(512)).isEqualTo("512 B");
        assertThat(SizeConverter.format(1536)).isEqualTo("1.5 KiB");
        assertThat(SizeConverter.format(256L << 20)).isEqualTo("256 MiB");
    }
}
