//! Docks for Gazebo: gz-sim's `DetachableJoint` system joining two modules' links, as the
//! embedded simulator's `Simulator::attach` joins two ports (decision record 0051).
//!
//! A dock is made at run time, when its two ports meet: the system is added to the parent
//! model with the world's `entity/system/add` service (gz.msgs.EntityPlugin_V), and the
//! system attaches at once — a fixed joint from the parent link to the child link at the
//! pose they have then. It is broken with an empty message on its detach topic (and made
//! again on its attach topic), both bridged from ROS by ros_gz_bridge. Which modules meet
//! is decided at run time (the roles), so no dock can be written into the world file.
//!
//! Gazebo loads our URDF through sdformat, which lumps every fixed joint: a port on a link
//! hung by a fixed joint (the plate on `base_link`'s `base_joint`, the wheel's front disc
//! on the force sensor's joint) is on the link it is lumped into, and the system must name
//! that one ([`gazebo_link`]).

use crate::error::{DescriptionError, Result};
use crate::model::{JointKind, UrdfModel};

/// gz-sim's system that joins two links at run time.
pub const DETACHABLE_JOINT_FILENAME: &str = "gz-sim-detachable-joint-system";
/// Its plugin name.
pub const DETACHABLE_JOINT_NAME: &str = "gz::sim::systems::DetachableJoint";

/// One dock in Gazebo: which link of which model holds which link of which other model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GzDock {
    /// The dock's name (the embedded simulator's dock name, e.g. `role3.F-role1.R`).
    pub name: String,
    /// The world the models are in.
    pub world: String,
    /// The model the system is added to.
    pub parent_model: String,
    /// Its link (after sdformat's lumping).
    pub parent_link: String,
    /// The model it holds.
    pub child_model: String,
    /// Its link (after sdformat's lumping).
    pub child_link: String,
}

fn invalid(what: String) -> DescriptionError {
    DescriptionError::InvalidUrdf {
        origin: "dock".into(),
        what,
    }
}

/// A Gazebo entity or topic name part: letters, digits and `_`, not empty, at most 64.
fn check_name(key: &str, v: &str) -> Result<()> {
    if v.is_empty() || v.len() > 64 || !v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(invalid(format!(
            "{key} `{}`: 1 to 64 letters, digits or `_`",
            v.chars().take(80).collect::<String>()
        )));
    }
    Ok(())
}

/// The link of the model Gazebo builds from `urdf` that holds URDF link `link`: the link
/// itself, or the one it is lumped into through fixed joints.
pub fn gazebo_link(urdf: &UrdfModel, link: &str) -> Result<String> {
    let Some(mut l) = urdf.link(link) else {
        return Err(invalid(format!(
            "robot `{}` has no link `{}`",
            urdf.name,
            link.chars().take(80).collect::<String>()
        )));
    };
    while let Some(j) = urdf.joints.iter().find(|j| j.child == l && j.kind == JointKind::Fixed) {
        l = j.parent;
    }
    Ok(urdf.links[l].name.clone())
}

/// The URDF link of port `port` of a one-module robot's module (the wheel-foot module's
/// F, L, R, BF, BS), refused naming the ports there are.
pub fn port_link(topology: &modbot_core::Topology, port: &str) -> Result<String> {
    let (Some(module), true) = (topology.modules.first(), topology.modules.len() == 1) else {
        return Err(invalid(format!(
            "robot `{}` has {} modules: a dock's robot is one module",
            topology.name,
            topology.modules.len()
        )));
    };
    let kind = topology.kind_of(0);
    let def = kind.ports.get(port).ok_or_else(|| {
        invalid(format!(
            "port `{}`: robot `{}`'s module has ports {}",
            port.chars().take(80).collect::<String>(),
            topology.name,
            kind.ports.keys().cloned().collect::<Vec<_>>().join(", ")
        ))
    })?;
    Ok(format!("{}_{}", module.name, def.link))
}

impl GzDock {
    /// The dock `name` in `world` from link `parent_link` of model `parent_model` to link
    /// `child_link` of model `child_model`, both models spawned from `urdf` (the links are
    /// the URDF's; they are mapped to the ones Gazebo builds). Refused naming the field.
    pub fn new(
        name: &str,
        world: &str,
        urdf: &UrdfModel,
        (parent_model, parent_link): (&str, &str),
        (child_model, child_link): (&str, &str),
    ) -> Result<GzDock> {
        if name.is_empty() || name.len() > 64 || !name.chars().all(|c| c.is_ascii_graphic()) {
            return Err(invalid(format!(
                "dock name `{}`: 1 to 64 printable characters without spaces",
                name.chars().take(80).collect::<String>()
            )));
        }
        check_name("world", world)?;
        check_name("parent model", parent_model)?;
        check_name("child model", child_model)?;
        if parent_model == child_model {
            return Err(invalid(format!(
                "dock `{name}`: parent and child are both model `{parent_model}`"
            )));
        }
        Ok(GzDock {
            name: name.into(),
            world: world.into(),
            parent_model: parent_model.into(),
            parent_link: gazebo_link(urdf, parent_link)?,
            child_model: child_model.into(),
            child_link: gazebo_link(urdf, child_link)?,
        })
    }

    /// The dock's name as a topic name part: `role3.F-role1.R` → `role3_F_role1_R`.
    pub fn topic_name(&self) -> String {
        self.name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }

    /// Gazebo topic of `what` (`detach`, `attach`, `state`).
    pub fn gz_topic(&self, what: &str) -> String {
        format!("/model/{}/dock/{}/{what}", self.parent_model, self.topic_name())
    }

    /// ROS topic of `what`, relative (the launch namespace applies).
    pub fn ros_topic(&self, what: &str) -> String {
        format!("dock/{}/{what}", self.topic_name())
    }

    /// The system's parameters: the inside of its `<plugin>` element.
    pub fn inner_xml(&self) -> String {
        format!(
            "<parent_link>{}</parent_link><child_model>{}</child_model><child_link>{}</child_link>\
             <detach_topic>{}</detach_topic><attach_topic>{}</attach_topic><output_topic>{}</output_topic>",
            self.parent_link,
            self.child_model,
            self.child_link,
            self.gz_topic("detach"),
            self.gz_topic("attach"),
            self.gz_topic("state"),
        )
    }

    /// The `<plugin>` element (for a model written with the dock in place).
    pub fn plugin_xml(&self) -> String {
        format!(
            "<plugin filename=\"{DETACHABLE_JOINT_FILENAME}\" name=\"{DETACHABLE_JOINT_NAME}\">{}</plugin>",
            self.inner_xml()
        )
    }

    /// The world's service that adds the system to the parent model (and so docks).
    pub fn service(&self) -> String {
        format!("/world/{}/entity/system/add", self.world)
    }

    /// The service's request, gz.msgs.EntityPlugin_V in protobuf text format.
    pub fn request(&self) -> String {
        let quoted = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        format!(
            "entity {{ name: \"{}\" type: MODEL }} plugins {{ name: \"{DETACHABLE_JOINT_NAME}\" filename: \"{DETACHABLE_JOINT_FILENAME}\" innerxml: \"{}\" }}",
            quoted(&self.parent_model),
            quoted(&self.inner_xml())
        )
    }

    /// The command line that docks with gz-transport's tool.
    pub fn gz_service_command(&self) -> Vec<String> {
        [
            "gz",
            "service",
            "-s",
            &self.service(),
            "--reqtype",
            "gz.msgs.EntityPlugin_V",
            "--reptype",
            "gz.msgs.Boolean",
            "--timeout",
            "2000",
            "--req",
            &self.request(),
        ]
        .map(String::from)
        .to_vec()
    }

    /// ros_gz_bridge entries: detach and attach from ROS (std_msgs/Empty), the state back.
    pub fn bridge_yaml(&self) -> String {
        let entry = |what: &str, ros_type: &str, gz_type: &str, direction: &str| {
            crate::urdf::bridge_entry_to(
                &self.ros_topic(what),
                &self.gz_topic(what),
                ros_type,
                gz_type,
                direction,
            )
        };
        [
            entry("detach", "std_msgs/msg/Empty", "gz.msgs.Empty", "ROS_TO_GZ"),
            entry("attach", "std_msgs/msg/Empty", "gz.msgs.Empty", "ROS_TO_GZ"),
            entry("state", "std_msgs/msg/String", "gz.msgs.StringMsg", "GZ_TO_ROS"),
        ]
        .concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DescriptionConfig, artifacts, urdf};
    use modbot_core::ModuleCatalog;

    fn wheelfoot() -> UrdfModel {
        let catalog = ModuleCatalog::builtin();
        let text = urdf::urdf(
            &artifacts::robot("wheelfoot", &catalog).unwrap(),
            &DescriptionConfig::builtin(),
        )
        .unwrap();
        UrdfModel::parse(&text, "wheelfoot").unwrap()
    }

    #[test]
    fn ports_on_lumped_links_name_the_link_gazebo_builds() {
        let m = wheelfoot();
        // The plate (ports BF, BS) hangs on base_link's fixed joint; the wheel's front disc
        // (port F) on the force sensor's fixed joint; the body (L, R) on a revolute joint.
        assert_eq!(gazebo_link(&m, "m1_foot").unwrap(), "base_link");
        assert_eq!(gazebo_link(&m, "m1_wheel_front").unwrap(), "m1_wheel");
        assert_eq!(gazebo_link(&m, "m1_body").unwrap(), "m1_body");
        let catalog = ModuleCatalog::builtin();
        let wf = artifacts::robot("wheelfoot", &catalog).unwrap();
        assert_eq!(port_link(&wf, "F").unwrap(), "m1_wheel_front");
        assert_eq!(port_link(&wf, "BS").unwrap(), "m1_foot");
        let e = port_link(&wf, "BX").unwrap_err().to_string();
        assert!(e.contains("`BX`") && e.contains("BF, BS, F, L, R"), "{e}");
        let e = port_link(&artifacts::robot("quadruped", &catalog).unwrap(), "F")
            .unwrap_err()
            .to_string();
        assert!(e.contains("6 modules"), "{e}");
        let e = gazebo_link(&m, "m1_tail").unwrap_err().to_string();
        assert!(e.contains("m1_tail") && e.contains("wheelfoot"), "{e}");
    }

    #[test]
    fn a_dock_is_a_detachable_joint_added_to_the_parent_model() {
        let m = wheelfoot();
        let d = GzDock::new(
            "role3.F-role1.R",
            "strategic_mission",
            &m,
            ("module_1", "m1_body"),
            ("module_4", "m1_wheel_front"),
        )
        .unwrap();
        assert_eq!(d.child_link, "m1_wheel");
        assert_eq!(d.topic_name(), "role3_F_role1_R");
        assert_eq!(d.service(), "/world/strategic_mission/entity/system/add");
        assert_eq!(
            d.plugin_xml(),
            "<plugin filename=\"gz-sim-detachable-joint-system\" name=\"gz::sim::systems::DetachableJoint\">\
             <parent_link>m1_body</parent_link><child_model>module_4</child_model><child_link>m1_wheel</child_link>\
             <detach_topic>/model/module_1/dock/role3_F_role1_R/detach</detach_topic>\
             <attach_topic>/model/module_1/dock/role3_F_role1_R/attach</attach_topic>\
             <output_topic>/model/module_1/dock/role3_F_role1_R/state</output_topic></plugin>"
        );
        assert!(
            d.request().starts_with(
                "entity { name: \"module_1\" type: MODEL } plugins { name: \"gz::sim::systems::DetachableJoint\""
            ),
            "{}",
            d.request()
        );
        let argv = d.gz_service_command();
        assert_eq!(
            argv[..4],
            ["gz", "service", "-s", "/world/strategic_mission/entity/system/add"]
        );
        assert_eq!(argv.last(), Some(&d.request()));
        let yaml = d.bridge_yaml();
        let entries: Vec<serde_yaml_ng::Value> = serde_yaml_ng::from_str(&yaml).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0]["ros_topic_name"], "dock/role3_F_role1_R/detach");
        assert_eq!(
            entries[0]["gz_topic_name"],
            "/model/module_1/dock/role3_F_role1_R/detach"
        );
        assert_eq!(entries[2]["direction"], "GZ_TO_ROS");
    }

    #[test]
    fn bad_docks_are_refused_naming_the_field() {
        let m = wheelfoot();
        let ok = ("module_1", "m1_body");
        for (name, world, parent, child, want) in [
            ("", "w", ok, ("module_2", "m1_body"), "dock name"),
            ("a b", "w", ok, ("module_2", "m1_body"), "dock name"),
            ("d", "my world", ok, ("module_2", "m1_body"), "world"),
            (
                "d",
                "w",
                ("module/1", "m1_body"),
                ("module_2", "m1_body"),
                "parent model",
            ),
            ("d", "w", ok, ("", "m1_body"), "child model"),
            ("d", "w", ok, ("module_1", "m1_foot"), "both model `module_1`"),
            ("d", "w", ok, ("module_2", "m1_fin"), "m1_fin"),
        ] {
            let e = GzDock::new(name, world, &m, parent, child).unwrap_err().to_string();
            assert!(e.contains(want), "{want}: {e}");
        }
    }
}
