//! Bringing up the loopback interface of a new network namespace, so a command without the
//! network can still serve and reach itself on 127.0.0.1 (a test suite's local server).

use super::HelperError;
use netlink_packet_core::{NLM_F_ACK, NLM_F_REQUEST, NetlinkMessage, NetlinkPayload};
use netlink_packet_route::RouteNetlinkMessage;
use netlink_packet_route::link::{LinkFlags, LinkMessage};
use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_ROUTE};
use std::io;

/// Sets the `lo` interface of the current network namespace up, over rtnetlink.
pub(crate) fn bring_up() -> Result<(), HelperError> {
    set_up("lo").map_err(HelperError::io("bring up the loopback interface"))
}

fn set_up(name: &str) -> io::Result<()> {
    let index = nix::net::if_::if_nametoindex(name).map_err(io::Error::from)?;
    let mut link = LinkMessage::default();
    link.header.index = index;
    link.header.flags = LinkFlags::Up;
    link.header.change_mask = LinkFlags::Up;
    let mut request = NetlinkMessage::from(RouteNetlinkMessage::SetLink(link));
    request.header.flags = NLM_F_REQUEST | NLM_F_ACK;
    request.header.sequence_number = 1;
    request.finalize();
    let mut bytes = vec![0; request.buffer_len()];
    request.serialize(&mut bytes);

    let mut socket = Socket::new(NETLINK_ROUTE)?;
    socket.bind_auto()?;
    socket.connect(&SocketAddr::new(0, 0))?;
    socket.send(&bytes, 0)?;
    let (reply, _) = socket.recv_from_full()?;
    let reply = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&reply)
        .map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err.to_string()))?;
    match reply.payload {
        NetlinkPayload::Error(error) => match error.code {
            None => Ok(()),
            Some(code) => Err(io::Error::from_raw_os_error(-code.get())),
        },
        other => Err(io::Error::other(format!(
            "the kernel answered with message type {} instead of an acknowledgement",
            other.message_type()
        ))),
    }
}
