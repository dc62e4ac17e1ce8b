//! Access control: the ACL file, the ACL LOG length, and which channels new
//! users get (`aclfile`, `acllog-max-len`, `acl-pubsub-default`).

use super::super::values::*;
use super::super::Param;

pub static ACL: &[Param] = &[
    p!("aclfile", false, "", |s| s.aclfile.clone(), |s, v| {
        s.aclfile = v.to_string();
        Ok(())
    }),
    p!(
        "acllog-max-len",
        true,
        "128",
        |s| s.acllog_max_len.to_string(),
        |s, v| {
            s.acllog_max_len = int_in(v, 0, i64::MAX)? as u64;
            Ok(())
        }
    ),
    p!(
        "acl-pubsub-default",
        true,
        "resetchannels",
        |s| if s.acl_pubsub_all {
            "allchannels".into()
        } else {
            "resetchannels".into()
        },
        |s, v| {
            s.acl_pubsub_all = if v.eq_ignore_ascii_case("allchannels") {
                true
            } else if v.eq_ignore_ascii_case("resetchannels") {
                false
            } else {
                return Err(
                    "argument(s) must be one of the following: allchannels, resetchannels".into(),
                );
            };
            Ok(())
        }
    ),
];
