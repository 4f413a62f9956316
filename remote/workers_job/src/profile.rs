//! The two profiles' Slurm requests. Noctua 2: PC2 runs FPGA synthesis in partition `normal`
//! under QoS `fpgasynthesis`, 32 to 64 CPUs, 64 GB and 4 to 12 hours per job (PC2 Noctua 2
//! documentation, "Additional Information for FPGA Projects"); a worker runs one such job at
//! a time, so each Slurm task asks for what one synthesis job gets. Local: the single-node
//! test cluster of deploy/tests/slurm_cluster.sh (its default partition, 30 minutes at most).

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    Noctua2,
    Local,
}

/// What a profile asks Slurm for, before the user's overrides.
pub struct Request {
    pub partition: Option<&'static str>,
    pub qos: Option<&'static str>,
    pub cpus_per_worker: u32,
    /// Memory per CPU (`--mem-per-cpu`), so a worker's share follows its CPUs.
    pub mem_per_cpu: Option<&'static str>,
    pub time: &'static str,
}

impl Profile {
    pub fn request(self) -> Request {
        match self {
            // 32 CPUs x 2G = the 64G of one synthesis job
            Profile::Noctua2 => Request {
                partition: Some("normal"),
                qos: Some("fpgasynthesis"),
                cpus_per_worker: 32,
                mem_per_cpu: Some("2G"),
                time: "4:00:00",
            },
            Profile::Local => Request {
                partition: None,
                qos: None,
                cpus_per_worker: 1,
                mem_per_cpu: None,
                time: "30:00",
            },
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Noctua2 => "noctua2",
            Profile::Local => "local",
        }
    }
}
