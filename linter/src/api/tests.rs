//! The API tables: the built-in ones load, canonicalise and are shared; configuration entries
//! are checked against what their roles need.

use super::*;

#[test]
fn built_in_tables_load_and_canonicalise() {
    let api = Api::new(Table::default()).unwrap();
    let path = |s: &str| segments(s);
    assert_eq!(
        api.canonical(path("candle_core::cuda::cudarc::driver::safe::CudaContext")),
        path("cudarc::driver::CudaContext")
    );
    assert_eq!(
        api.canonical(path("burn_tensor::Device::default")),
        path("burn::tensor::Device::default")
    );
    assert!(api.item("tch::Device::cuda_if_available").is_some());
    assert!(
        api.method("cudarc::driver::CudaContext", "bind_to_thread")
            .is_some()
    );
    assert_eq!(
        api.raw("cudaSetDevice"),
        Some("cudarc::runtime::sys::cudaSetDevice")
    );
    let knows = |s: &str| api.knows(&path(s));
    assert!(knows("burn_core") && knows("tch") && knows("tch::Device") && !knows("serde"));
    assert!(knows("cudarc::driver::CudaContext") && knows("tch::Device::cuda_if_available"));
}

fn load(text: &str) -> Result<Arc<Api>, String> {
    Api::new(toml::from_str(text).map_err(|err| err.to_string())?)
}

#[test]
fn entries_missing_what_their_role_needs_are_named() {
    let err =
        load("[[item]]\npath = \"my_crate::gpu::pick\"\nrole = \"explicit_device\"\n").unwrap_err();
    assert_eq!(
        err,
        "the configuration API table: `my_crate::gpu::pick` has role `explicit_device` but \
         no `ordinal` (the index of the argument that is the GPU ordinal)"
    );
    let err =
        load("[[method]]\non = [\"my::T\"]\nnames = [\"go\"]\nrole = \"transfer\"\n").unwrap_err();
    assert!(
        err.contains("`my::T::{go}`") && err.contains("`device`"),
        "{err}"
    );
    let err = load("[[item]]\npath = \"my::f\"\nrole = \"set_current_device\"\nordinal = 0\n")
        .unwrap_err();
    assert!(
        err.contains("`my::f` gives `ordinal`, which role `set_current_device` does not use"),
        "{err}"
    );
    let api =
        load("[[item]]\npath = \"my::gpu\"\nrole = \"explicit_device\"\nordinal = 1\n").unwrap();
    assert_eq!(
        api.item("my::gpu").map(|entry| &entry.role),
        Some(&Role::ExplicitDevice {
            ordinal: 1,
            gpu: "cuda".to_owned()
        })
    );
}

#[test]
fn a_configuration_without_entries_shares_the_built_in_tables() {
    let plain = Api::new(Table::default()).unwrap();
    assert!(Arc::ptr_eq(&plain, &Api::new(Table::default()).unwrap()));
    let own =
        load("[[item]]\npath = \"my::gpu\"\nrole = \"explicit_device\"\nordinal = 1\n").unwrap();
    assert!(!Arc::ptr_eq(&plain, &own));
    assert!(plain.item("my::gpu").is_none() && own.item("my::gpu").is_some());
    let python = Api::python(Table::default()).unwrap();
    assert!(Arc::ptr_eq(
        &python,
        &Api::python(Table::default()).unwrap()
    ));
}

#[test]
fn facts_about_one_function_give_the_same_entry_in_any_order() {
    let api = Api::new(Table::default()).unwrap();
    let opener = |gpu: &str| Chooser {
        path: "vanga::pick".to_owned(),
        krate: crate::source::CrateId::default(),
        returns: String::new(),
        unless_given: Vec::new(),
        opens: Some((0, gpu.to_owned())),
    };
    let (cuda, metal) = (opener("cuda"), opener("metal"));
    let label = "opens the GPU its argument 1 names".to_owned();
    for facts in [
        vec![(&cuda, &label), (&metal, &label)],
        vec![(&metal, &label), (&cuda, &label)],
    ] {
        let extended = api.with_choosers(facts);
        let entry = extended.item("vanga::pick").unwrap();
        assert!(matches!(&entry.role, Role::ExplicitDevice { gpu, .. } if gpu == "cuda"));
    }
}
