//! [`RunSample`] as the protobuf message `runsample.RunSample`: its schema (the
//! FileDescriptorSet every recording and live view carries), its encoding and its decoding,
//! all through one `prost` message ([`wire::RunSample`]) whose tags are written out.
//!
//! The numbers are fixed by the recordings that exist: fields 1 to 13 in the order of
//! [`RunSample`]'s declaration. Such a file may hold repeated doubles one tagged value each;
//! this encoder packs them (the proto3 default the schema implies), and the decoder reads
//! both forms.

use super::messages::RunSample;
use foxglove::bytes::BufMut;
use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FieldDescriptorProto, FileDescriptorProto, FileDescriptorSet};
use std::sync::OnceLock;

/// The schema's name: package `runsample`, message `RunSample`.
const SCHEMA_NAME: &str = "runsample.RunSample";

/// The message's fields as the schema describes them: name, number, label and type. A field
/// added later takes the next unused number; a number is never reused, or recordings
/// written before no longer decode as they were written.
const FIELDS: [(&str, i32, Label, Type); 16] = [
    ("t", 1, Label::Optional, Type::Double),
    ("pose_cmd", 2, Label::Repeated, Type::Double),
    ("pose", 3, Label::Repeated, Type::Double),
    ("length_cmd", 4, Label::Repeated, Type::Double),
    ("length", 5, Label::Repeated, Type::Double),
    ("tension", 6, Label::Repeated, Type::Double),
    ("actuator_cmd", 7, Label::Repeated, Type::Double),
    ("actuator", 8, Label::Repeated, Type::Double),
    ("leg_length", 9, Label::Repeated, Type::Double),
    ("leg_force", 10, Label::Repeated, Type::Double),
    ("segment", 11, Label::Optional, Type::String),
    ("extra", 12, Label::Repeated, Type::Double),
    ("winch_tension", 13, Label::Repeated, Type::Double),
    ("motor_torque", 14, Label::Repeated, Type::Double),
    ("motor_velocity", 15, Label::Repeated, Type::Double),
    ("following_error", 16, Label::Repeated, Type::Double),
];

mod wire {
    /// The protobuf message, field for field [`super::RunSample`]'s, numbered as
    /// [`super::FIELDS`] (named as the schema names it: a decode error reads
    /// `RunSample.pose: …`).
    #[derive(Clone, PartialEq, prost::Message)]
    pub(super) struct RunSample {
        /// Written even when zero (`required` to prost; the schema's label is proto3's
        /// optional): a proto3 encoder leaves 0.0 out, and with it the sign of -0.0.
        #[prost(double, required, tag = "1")]
        pub t: f64,
        #[prost(double, repeated, tag = "2")]
        pub pose_cmd: Vec<f64>,
        #[prost(double, repeated, tag = "3")]
        pub pose: Vec<f64>,
        #[prost(double, repeated, tag = "4")]
        pub length_cmd: Vec<f64>,
        #[prost(double, repeated, tag = "5")]
        pub length: Vec<f64>,
        #[prost(double, repeated, tag = "6")]
        pub tension: Vec<f64>,
        #[prost(double, repeated, tag = "7")]
        pub actuator_cmd: Vec<f64>,
        #[prost(double, repeated, tag = "8")]
        pub actuator: Vec<f64>,
        #[prost(double, repeated, tag = "9")]
        pub leg_length: Vec<f64>,
        #[prost(double, repeated, tag = "10")]
        pub leg_force: Vec<f64>,
        #[prost(string, tag = "11")]
        pub segment: String,
        #[prost(double, repeated, tag = "12")]
        pub extra: Vec<f64>,
        #[prost(double, repeated, tag = "13")]
        pub winch_tension: Vec<f64>,
        #[prost(double, repeated, tag = "14")]
        pub motor_torque: Vec<f64>,
        #[prost(double, repeated, tag = "15")]
        pub motor_velocity: Vec<f64>,
        #[prost(double, repeated, tag = "16")]
        pub following_error: Vec<f64>,
    }
}

/// Why the bytes of a `/run` message are not a [`RunSample`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RunSampleDecodeError {
    #[error("{0}")]
    Protobuf(#[from] prost::DecodeError),
    #[error("{field} has {values} values, not 6")]
    NotAPose { field: &'static str, values: usize },
}

/// A [`RunSample`] from its protobuf bytes (packed or one tagged value each; fields this
/// version does not know are skipped).
pub(crate) fn decode_run_sample(data: &[u8]) -> Result<RunSample, RunSampleDecodeError> {
    let w = wire::RunSample::decode(data)?;
    let pose = |field: &'static str, values: Vec<f64>| {
        <[f64; 6]>::try_from(values).map_err(|values| RunSampleDecodeError::NotAPose {
            field,
            values: values.len(),
        })
    };
    Ok(RunSample {
        t: w.t,
        pose_cmd: pose("pose_cmd", w.pose_cmd)?,
        pose: pose("pose", w.pose)?,
        length_cmd: w.length_cmd,
        length: w.length,
        tension: w.tension,
        actuator_cmd: w.actuator_cmd,
        actuator: w.actuator,
        leg_length: w.leg_length,
        leg_force: w.leg_force,
        segment: w.segment,
        extra: w.extra,
        winch_tension: w.winch_tension,
        motor_torque: w.motor_torque,
        motor_velocity: w.motor_velocity,
        following_error: w.following_error,
    })
}

impl From<&RunSample> for wire::RunSample {
    fn from(s: &RunSample) -> wire::RunSample {
        wire::RunSample {
            t: s.t,
            pose_cmd: s.pose_cmd.to_vec(),
            pose: s.pose.to_vec(),
            length_cmd: s.length_cmd.clone(),
            length: s.length.clone(),
            tension: s.tension.clone(),
            actuator_cmd: s.actuator_cmd.clone(),
            actuator: s.actuator.clone(),
            leg_length: s.leg_length.clone(),
            leg_force: s.leg_force.clone(),
            segment: s.segment.clone(),
            extra: s.extra.clone(),
            winch_tension: s.winch_tension.clone(),
            motor_torque: s.motor_torque.clone(),
            motor_velocity: s.motor_velocity.clone(),
            following_error: s.following_error.clone(),
        }
    }
}

/// The schema: one proto3 file, `RunSample.proto`, of package `runsample` holding the one
/// message `RunSample` with [`FIELDS`].
fn file_descriptor_set() -> FileDescriptorSet {
    let field = |&(name, number, label, ty): &(&str, i32, Label, Type)| FieldDescriptorProto {
        name: Some(name.to_string()),
        number: Some(number),
        label: Some(label as i32),
        r#type: Some(ty as i32),
        ..FieldDescriptorProto::default()
    };
    FileDescriptorSet {
        file: vec![FileDescriptorProto {
            name: Some("RunSample.proto".to_string()),
            package: Some("runsample".to_string()),
            message_type: vec![DescriptorProto {
                name: Some("RunSample".to_string()),
                field: FIELDS.iter().map(field).collect(),
                ..DescriptorProto::default()
            }],
            syntax: Some("proto3".to_string()),
            ..FileDescriptorProto::default()
        }],
    }
}

impl foxglove::Encode for RunSample {
    type Error = prost::EncodeError;

    fn get_schema() -> Option<foxglove::Schema> {
        static SCHEMA: OnceLock<Vec<u8>> = OnceLock::new();
        let data = SCHEMA.get_or_init(|| file_descriptor_set().encode_to_vec());
        Some(foxglove::Schema::new(
            SCHEMA_NAME,
            "protobuf",
            data.as_slice(),
        ))
    }

    fn get_message_encoding() -> String {
        "protobuf".to_string()
    }

    fn encode(&self, buf: &mut impl BufMut) -> Result<(), prost::EncodeError> {
        wire::RunSample::from(self).encode(buf)
    }

    /// Exact, for a second copy of the sample's vectors (a few hundred bytes).
    fn encoded_len(&self) -> Option<usize> {
        Some(wire::RunSample::from(self).encoded_len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use foxglove::Encode;

    /// The schema `#[derive(foxglove::Encode)]` (foxglove 0.30.3) gave `RunSample`, as bytes,
    /// with the drive fields (14–16) added as the derive adds a field: after the others.
    const DERIVED_SCHEMA: &str = concat!(
        "0adf020a0f52756e53616d706c652e70726f746f120972756e73616d706c6522b8020a0952756e53616d706c",
        "6512090a017418012001280112100a08706f73655f636d64180220032801120c0a04706f7365180320032801",
        "12120a0a6c656e6774685f636d64180420032801120e0a066c656e677468180520032801120f0a0774656e73",
        "696f6e18062003280112140a0c6163747561746f725f636d6418072003280112100a086163747561746f7218",
        "082003280112120a0a6c65675f6c656e67746818092003280112110a096c65675f666f726365180a20032801",
        "120f0a077365676d656e74180b20012809120d0a056578747261180c2003280112150a0d77696e63685f7465",
        "6e73696f6e180d2003280112140a0c6d6f746f725f746f72717565180e2003280112160a0e6d6f746f725f76",
        "656c6f63697479180f2003280112170a0f666f6c6c6f77696e675f6572726f72181020032801620670726f74",
        "6f33",
    );

    /// [`sample`] as that derive encoded it: every repeated double under its own tag.
    const DERIVED_SAMPLE: &str = concat!(
        "09000000000000d03f119a9999999999b93f119a9999999999c9bf11333333333333d33f1100000000000000",
        "001100000000000000801159f3f8c21f6ea50119000000000000f03f19000000000000004019000000000000",
        "084019000000000000100019010000000000000019000000000000f8bf21000000000000f83f210000000000",
        "00044029000000000000f43f2900000000000002403100000000000024403100000000000034403900000000",
        "0000e03f41000000000000e83f49333333333333d33f5100000000000010c05a04686f6c6461000000000000",
        "1c40610000000000000080690000000000002640690000000000003540",
    );

    fn bytes_of(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).expect("hex"))
            .collect()
    }

    /// Every field set, with numbers whose bits are easy to lose: -0.0, a subnormal, the
    /// smallest normal.
    fn sample() -> RunSample {
        RunSample {
            t: 0.25,
            pose_cmd: [0.1, -0.2, 0.3, 0.0, -0.0, 1e-300],
            pose: [1.0, 2.0, 3.0, f64::MIN_POSITIVE, 5e-324, -1.5],
            length_cmd: vec![1.5, 2.5],
            length: vec![1.25, 2.25],
            tension: vec![10.0, 20.0],
            actuator_cmd: vec![0.5],
            actuator: vec![0.75],
            leg_length: vec![0.3],
            leg_force: vec![-4.0],
            segment: "hold".into(),
            extra: vec![7.0, -0.0],
            winch_tension: vec![11.0, 21.0],
            // (The drive fields came after the derive: see `the_drive_fields_round_trip`.)
            ..RunSample::default()
        }
    }

    #[test]
    fn the_drive_fields_round_trip() {
        let s = RunSample {
            motor_torque: vec![-0.25, -0.0],
            motor_velocity: vec![3.5, 5e-324],
            following_error: vec![-1e-6, f64::MIN_POSITIVE],
            ..sample()
        };
        assert_eq!(bits(&round_trip(&s)), bits(&s));
    }

    /// The sample's numbers as bits, field by field, and its segment.
    fn bits(s: &RunSample) -> (Vec<Vec<u64>>, String) {
        let b = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let fields = [
            b(&[s.t]),
            b(&s.pose_cmd),
            b(&s.pose),
            b(&s.length_cmd),
            b(&s.length),
            b(&s.tension),
            b(&s.actuator_cmd),
            b(&s.actuator),
            b(&s.leg_length),
            b(&s.leg_force),
            b(&s.extra),
            b(&s.winch_tension),
            b(&s.motor_torque),
            b(&s.motor_velocity),
            b(&s.following_error),
        ];
        (fields.to_vec(), s.segment.clone())
    }

    fn encoded(s: &RunSample) -> Vec<u8> {
        let mut buf = Vec::new();
        s.encode(&mut buf).expect("encodes");
        assert_eq!(s.encoded_len(), Some(buf.len()));
        buf
    }

    /// `s` encoded, then decoded.
    fn round_trip(s: &RunSample) -> RunSample {
        decode_run_sample(&encoded(s)).expect("decodes")
    }

    #[test]
    fn the_schema_is_the_one_the_derive_wrote() {
        let schema = RunSample::get_schema().expect("a schema");
        assert_eq!(
            (schema.name.as_str(), schema.encoding.as_str()),
            ("runsample.RunSample", "protobuf")
        );
        assert_eq!(RunSample::get_message_encoding(), "protobuf");
        let set = FileDescriptorSet::decode(&schema.data[..]).expect("a FileDescriptorSet");
        let [file] = &set.file[..] else {
            panic!("{} files", set.file.len());
        };
        assert_eq!(file.name(), "RunSample.proto");
        assert_eq!(file.package(), "runsample");
        assert_eq!(file.syntax(), "proto3");
        assert!(file.dependency.is_empty());
        let [message] = &file.message_type[..] else {
            panic!("{} messages", file.message_type.len());
        };
        assert_eq!(message.name(), "RunSample");
        assert!(message.nested_type.is_empty() && message.enum_type.is_empty());
        let fields: Vec<(&str, i32, Label, Type)> = message
            .field
            .iter()
            .map(|f| {
                assert!(f.type_name.is_none() && f.options.is_none() && f.oneof_index.is_none());
                (f.name(), f.number(), f.label(), f.r#type())
            })
            .collect();
        let repeated = |name, number| (name, number, Label::Repeated, Type::Double);
        assert_eq!(
            fields,
            [
                ("t", 1, Label::Optional, Type::Double),
                repeated("pose_cmd", 2),
                repeated("pose", 3),
                repeated("length_cmd", 4),
                repeated("length", 5),
                repeated("tension", 6),
                repeated("actuator_cmd", 7),
                repeated("actuator", 8),
                repeated("leg_length", 9),
                repeated("leg_force", 10),
                ("segment", 11, Label::Optional, Type::String),
                repeated("extra", 12),
                repeated("winch_tension", 13),
                repeated("motor_torque", 14),
                repeated("motor_velocity", 15),
                repeated("following_error", 16),
            ]
        );
        // Byte for byte what the derive gave: a reader caching schemas by content sees one.
        assert_eq!(&schema.data[..], &bytes_of(DERIVED_SCHEMA)[..]);
    }

    #[test]
    fn each_field_is_encoded_under_its_schema_number() {
        for &(name, number, label, _) in &FIELDS {
            let mut w = wire::RunSample::default();
            match name {
                "t" => w.t = 1.0,
                "pose_cmd" => w.pose_cmd = vec![1.0],
                "pose" => w.pose = vec![1.0],
                "length_cmd" => w.length_cmd = vec![1.0],
                "length" => w.length = vec![1.0],
                "tension" => w.tension = vec![1.0],
                "actuator_cmd" => w.actuator_cmd = vec![1.0],
                "actuator" => w.actuator = vec![1.0],
                "leg_length" => w.leg_length = vec![1.0],
                "leg_force" => w.leg_force = vec![1.0],
                "segment" => w.segment = "s".into(),
                "extra" => w.extra = vec![1.0],
                "winch_tension" => w.winch_tension = vec![1.0],
                "motor_torque" => w.motor_torque = vec![1.0],
                "motor_velocity" => w.motor_velocity = vec![1.0],
                "following_error" => w.following_error = vec![1.0],
                other => panic!("no wire field for {other}"),
            }
            let mut bytes = &w.encode_to_vec()[..];
            // `t` comes first, always (0x09: field 1, 64-bit).
            if name != "t" {
                assert_eq!(bytes[0], 0x09, "{name}");
                bytes = &bytes[9..];
            }
            let (tag, wire_type) = prost::encoding::decode_key(&mut bytes).expect("a key");
            let want = if label == Label::Repeated || name == "segment" {
                prost::encoding::WireType::LengthDelimited
            } else {
                prost::encoding::WireType::SixtyFourBit
            };
            assert_eq!((tag, wire_type), (number as u32, want), "{name}");
        }
    }

    #[test]
    fn a_sample_decodes_bit_for_bit() {
        let s = sample();
        assert_eq!(bits(&round_trip(&s)), bits(&s));
        // A time of -0.0 and empty fields: nothing of the sign is lost.
        let quiet = RunSample {
            t: -0.0,
            ..RunSample::default()
        };
        assert_eq!(bits(&round_trip(&quiet)), bits(&quiet));
        // NaN with a payload.
        let nan = RunSample {
            t: f64::from_bits(0x7ff8_0000_0000_1234),
            ..sample()
        };
        assert_eq!(bits(&round_trip(&nan)), bits(&nan));
    }

    #[test]
    fn a_sample_the_derive_wrote_decodes_and_is_written_packed_now() {
        let old = bytes_of(DERIVED_SAMPLE);
        let s = decode_run_sample(&old).expect("decodes");
        assert_eq!(bits(&s), bits(&sample()));
        // Packed: a tag and a length per field rather than a tag per value (245 bytes is
        // also what Python's `protobuf` 7.36 serialises this sample to, byte for byte).
        let now = encoded(&s).len();
        assert_eq!((now, old.len()), (245, 249));
        assert_eq!(bits(&round_trip(&s)), bits(&s));
        // A field of a later version (number 20, a varint) is skipped.
        let mut later = old.clone();
        later.extend_from_slice(&[0xa0, 0x01, 0x05]);
        assert_eq!(bits(&decode_run_sample(&later).expect("decodes")), bits(&s));
    }

    #[test]
    fn a_pose_of_other_than_6_values_is_refused_by_name() {
        let mut w = wire::RunSample::from(&sample());
        w.pose.pop();
        assert_eq!(
            decode_run_sample(&w.encode_to_vec()),
            Err(RunSampleDecodeError::NotAPose {
                field: "pose",
                values: 5
            })
        );
        let mut w = wire::RunSample::from(&sample());
        w.pose_cmd.push(0.0);
        let err = decode_run_sample(&w.encode_to_vec()).expect_err("7 values");
        assert_eq!(err.to_string(), "pose_cmd has 7 values, not 6");
        // A double cut short, a wrong wire type: prost's errors, naming the field.
        let err = decode_run_sample(&[0x09, 1, 2]).expect_err("truncated");
        assert!(matches!(err, RunSampleDecodeError::Protobuf(_)), "{err}");
        let err = decode_run_sample(&[0x10, 1]).expect_err("a varint for pose_cmd");
        assert!(err.to_string().contains("RunSample.pose_cmd"), "{err}");
    }
}
