package io.hayloft.s3;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;
import javax.xml.stream.XMLStreamWriter;

/**
 * S3's XML: answers written with the JDK's StAX writer in S3's namespace ({@link Writer}), and
 * request bodies (DeleteObjects, CompleteMultipartUpload, CreateBucketConfiguration) read into a
 * small element tree ({@link #parse}) with DTDs and external entities refused: a DOCTYPE, an entity
 * that is not one of XML's five, a body nested deeper than {@value #MAX_DEPTH} or with more than
 * {@value #MAX_ELEMENTS} elements is MalformedXML. Thread-safe: the factories are configured once
 * and only read.
 */
public final class Xml {
    public static final String NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/";
    public static final String CONTENT_TYPE = "application/xml";
    static final int MAX_DEPTH = 16;
    static final int MAX_ELEMENTS = 100_000;
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
            .withZone(ZoneOffset.UTC);
    private static final XMLInputFactory IN = inputFactory();
    private static final XMLOutputFactory OUT = XMLOutputFactory.newFactory();

    private Xml() {
    }

    private static XMLInputFactory inputFactory() {
        XMLInputFactory f = XMLInputFactory.newFactory();
        f.setProperty(XMLInputFactory.SUPPORT_DTD, false);
        f.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
        f.setProperty(XMLInputFactory.IS_REPLACING_ENTITY_REFERENCES, false);
        f.setProperty(XMLInputFactory.IS_COALESCING, true);
        f.setXMLResolver((publicId, systemId, base, ns) -> {
            throw new XMLStreamException("external entities are refused");
        });
        return f;
    }

    /** S3's time format in XML bodies: {@code 2009-10-12T17:50:30.000Z}. */
    public static String time(long epochMillis) {
        return ISO.format(Instant.ofEpochMilli(epochMillis));
    }

    /** An element of a parsed body: its local name (namespace ignored, as S3 does), its text, its children. */
    public record Element(String name, String text, List<Element> children) {
        /** The first child called {@code name}, or null. */
        public Element child(String name) {
            for (Element e : children) {
                if (e.name.equals(name)) {
                    return e;
                }
            }
            return null;
        }

        /** The text of the first child called {@code name}, or null. */
        public String childText(String name) {
            Element e = child(name);
            return e == null ? null : e.text;
        }

        public List<Element> all(String name) {
            List<Element> l = new ArrayList<>();
            for (Element e : children) {
                if (e.name.equals(name)) {
                    l.add(e);
                }
            }
            return l;
        }
    }

    /** Parses a request body; its root must be called {@code root}. Anything malformed or hostile: MalformedXML. */
    public static Element parse(byte[] body, String root) {
        if (body.length == 0) {
            throw S3Error.MALFORMED_XML.exception();
        }
        XMLStreamReader r = null;
        try {
            r = IN.createXMLStreamReader(new ByteArrayInputStream(body));
            List<Element> stack = new ArrayList<>();
            List<StringBuilder> texts = new ArrayList<>();
            List<List<Element>> kids = new ArrayList<>();
            Element top = null;
            int count = 0;
            while (r.hasNext()) {
                int ev = r.next();
                switch (ev) {
                    case XMLStreamConstants.DTD, XMLStreamConstants.ENTITY_REFERENCE, XMLStreamConstants.ENTITY_DECLARATION ->
                            throw S3Error.MALFORMED_XML.exception("DTDs and entities are not accepted");
                    case XMLStreamConstants.START_ELEMENT -> {
                        if (top != null || ++count > MAX_ELEMENTS || stack.size() >= MAX_DEPTH) {
                            throw S3Error.MALFORMED_XML.exception();
                        }
                        stack.add(new Element(r.getLocalName(), null, null));
                        texts.add(new StringBuilder());
                        kids.add(new ArrayList<>());
                    }
                    case XMLStreamConstants.CHARACTERS, XMLStreamConstants.CDATA, XMLStreamConstants.SPACE -> {
                        if (!texts.isEmpty()) {
                            texts.get(texts.size() - 1).append(r.getText());
                        }
                    }
                    case XMLStreamConstants.END_ELEMENT -> {
                        int i = stack.size() - 1;
                        Element e = new Element(stack.remove(i).name, texts.remove(i).toString(), List.copyOf(kids.remove(i)));
                        if (i == 0) {
                            top = e;
                        } else {
                            kids.get(i - 1).add(e);
                        }
                    }
                    default -> {
                    }
                }
            }
            if (top == null || !top.name.equals(root)) {
                throw S3Error.MALFORMED_XML.exception();
            }
            return top;
        } catch (XMLStreamException | RuntimeException e) {
            if (e instanceof S3Exception s) {
                throw s;
            }
            throw S3Error.MALFORMED_XML.exception();
        } finally {
            if (r != null) {
                try {
                    r.close();
                } catch (XMLStreamException ignored) {
                    // nothing held
                }
            }
        }
    }

    /** Writes one answer: {@code new Writer("ListBucketResult").text("Name", b)...bytes()}. Not thread-safe. */
    public static final class Writer {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream(512);
        private final XMLStreamWriter w;
        private boolean done;

        /** A document whose root is {@code root} in S3's namespace. */
        public Writer(String root) {
            this(root, true);
        }

        /** {@code namespaced}: false for the {@code <Error>} root, which S3 sends without a namespace. */
        public Writer(String root, boolean namespaced) {
            try {
                w = OUT.createXMLStreamWriter(out, "UTF-8");
                w.writeStartDocument("UTF-8", "1.0");
                w.writeStartElement(root);
                if (namespaced) {
                    w.writeDefaultNamespace(NAMESPACE);
                }
            } catch (XMLStreamException e) {
                throw new IllegalStateException(e);
            }
        }

        public Writer start(String name) {
            try {
                w.writeStartElement(name);
            } catch (XMLStreamException e) {
                throw new IllegalStateException(e);
            }
            return this;
        }

        public Writer end() {
            try {
                w.writeEndElement();
            } catch (XMLStreamException e) {
                throw new IllegalStateException(e);
            }
            return this;
        }

        /** {@code <name>value</name>}; nothing when {@code value} is null. */
        public Writer text(String name, Object value) {
            if (value == null) {
                return this;
            }
            try {
                w.writeStartElement(name);
                w.writeCharacters(clean(value.toString()));
                w.writeEndElement();
            } catch (XMLStreamException e) {
                throw new IllegalStateException(e);
            }
            return this;
        }

        /** The document's bytes (closes the root). */
        public byte[] bytes() {
            if (!done) {
                try {
                    w.writeEndDocument();
                    w.close();
                } catch (XMLStreamException e) {
                    throw new IllegalStateException(e);
                }
                done = true;
            }
            return out.toByteArray();
        }
    }

    /** Characters XML 1.0 cannot carry (controls but tab, CR, LF; lone surrogates) as U+FFFD: a key may hold them. */
    static String clean(String s) {
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = c >= 0x20 && c != 0xFFFE && c != 0xFFFF || c == '\t' || c == '\n' || c == '\r';
            if (ok && Character.isSurrogate(c)) {
                ok = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))
                        || Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
            }
            if (!ok && b == null) {
                b = new StringBuilder(s.substring(0, i));
            }
            if (b != null) {
                b.append(ok ? c : '\uFFFD');
            }
        }
        return b == null ? s : b.toString();
    }
}
