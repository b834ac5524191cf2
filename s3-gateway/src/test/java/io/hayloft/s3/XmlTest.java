package io.hayloft.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Answers in S3's namespace, request bodies parsed, hostile XML refused as MalformedXML. */
class XmlTest {

    private static Xml.Element parse(String xml, String root) {
        return Xml.parse(xml.getBytes(StandardCharsets.UTF_8), root);
    }

    private static void malformed(String xml, String root) {
        assertThatThrownBy(() -> parse(xml, root)).isInstanceOfSatisfying(S3Exception.class,
                e -> assertThat(e.error()).isEqualTo(S3Error.MALFORMED_XML));
    }

    @Test
    void writesS3sNamespaceAndEscapes() {
        String xml = new String(new Xml.Writer("ListBucketResult").text("Name", "b1b").start("Contents")
                .text("Key", "a<b>&\"c\u0001").text("Size", 5L).text("Skipped", null).end().bytes(), StandardCharsets.UTF_8);
        assertThat(xml).startsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
                .contains("<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">")
                .contains("<Name>b1b</Name><Contents><Key>a&lt;b&gt;&amp;\"c\uFFFD</Key><Size>5</Size></Contents>")
                .doesNotContain("Skipped").endsWith("</ListBucketResult>");
        Xml.Element back = parse(xml, "ListBucketResult");
        assertThat(back.child("Contents").childText("Key")).isEqualTo("a<b>&\"c\uFFFD");
        assertThat(Xml.time(0)).isEqualTo("1970-01-01T00:00:00.000Z");
    }

    @Test
    void parsesDeleteAndCompleteBodies() {
        Xml.Element d = parse("<?xml version=\"1.0\"?><Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
                + "<Object><Key>a b</Key></Object><Object><Key><![CDATA[x&y]]></Key><VersionId>1</VersionId></Object></Delete>", "Delete");
        assertThat(d.childText("Quiet")).isEqualTo("true");
        assertThat(d.all("Object")).extracting(o -> o.childText("Key")).containsExactly("a b", "x&y");
        List<CompleteOp.Listed> parts = CompleteOp.parse(("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
                + "<ETag>\"aa\"</ETag><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part><Part><ETag>bb</ETag><PartNumber>3</PartNumber>"
                + "</Part></CompleteMultipartUpload>").getBytes(StandardCharsets.UTF_8));
        assertThat(parts).containsExactly(new CompleteOp.Listed(1, "aa", java.util.Map.of("CRC32", "AAAAAA==")),
                new CompleteOp.Listed(3, "bb", java.util.Map.of()));
    }

    @Test
    void partsOutOfOrderOrRepeatedAreInvalidPartOrder() {
        for (String order : new String[] {"2,1", "1,1"}) {
            StringBuilder b = new StringBuilder("<CompleteMultipartUpload>");
            for (String n : order.split(",")) {
                b.append("<Part><PartNumber>").append(n).append("</PartNumber><ETag>e</ETag></Part>");
            }
            b.append("</CompleteMultipartUpload>");
            assertThatThrownBy(() -> CompleteOp.parse(b.toString().getBytes(StandardCharsets.UTF_8)))
                    .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.INVALID_PART_ORDER));
        }
        assertThatThrownBy(() -> CompleteOp.parse("<CompleteMultipartUpload/>".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOfSatisfying(S3Exception.class, e -> assertThat(e.error()).isEqualTo(S3Error.MALFORMED_XML));
    }

    @Test
    void hostileXmlIsMalformed() {
        malformed("<!DOCTYPE Delete [<!ENTITY x \"boom\">]><Delete><Object><Key>&x;</Key></Object></Delete>", "Delete");
        malformed("<!DOCTYPE Delete [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><Delete><Object><Key>&x;</Key></Object></Delete>",
                "Delete");
        malformed("<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;\">]>"
                + "<Delete>&lol2;</Delete>", "Delete");
        malformed("<!DOCTYPE Delete SYSTEM \"http://127.0.0.1:1/evil.dtd\"><Delete/>", "Delete");
        malformed("<Delete><Object><Key>&undeclared;</Key></Object></Delete>", "Delete");
        malformed("<Delete>" + "<a>".repeat(50) + "</a>".repeat(50) + "</Delete>", "Delete");
        malformed("<Delete><Object>", "Delete");
        malformed("not xml at all", "Delete");
        malformed("", "Delete");
        malformed("<Other/>", "Delete");
        malformed("<Delete/><Delete/>", "Delete");
        malformed("<Delete><Object><Key>\u0000</Key></Object></Delete>", "Delete");
    }

    @Test
    void predefinedEntitiesAndCharacterReferencesAreText() {
        Xml.Element d = parse("<Delete><Object><Key>a&amp;b&lt;&#x20AC;</Key></Object></Delete>", "Delete");
        assertThat(d.child("Object").childText("Key")).isEqualTo("a&b<\u20ac");
    }
}
