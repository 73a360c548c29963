//! The demo's data: deterministic mandates (so tests can rely on them) and the orders
//! created while the server runs.

use serde_json::{json, Map, Value};

pub const MANDATES: usize = 120;

pub struct Mandate {
    pub id: String,
    pub reference: String,
    pub rum: String,
    pub state: &'static str,
    pub payment_scheme: &'static str,
    pub subscriber: String,
    pub date_signed: String,
    pub signatory: Value,
}

impl Mandate {
    pub fn document_id(&self) -> String {
        format!("doc-{}", self.reference.to_ascii_lowercase())
    }
}

pub struct Order {
    /// The state properties (everything but `_links`), merge-patchable.
    pub state: Map<String, Value>,
    pub subscriber: String,
    pub items: Value,
    pub access_code: String,
}

impl Order {
    pub fn id(&self) -> &str {
        self.state.get("id").and_then(Value::as_str).unwrap_or("")
    }

    pub fn field(&self, name: &str) -> Option<&str> {
        self.state.get(name).and_then(Value::as_str)
    }
}

pub struct Demo {
    pub mandates: Vec<Mandate>,
    pub orders: Vec<Order>,
}

const GIVEN: [&str; 12] = [
    "Alice",
    "Bruno",
    "Camille",
    "David",
    "Emma",
    "Farid",
    "Gabrielle",
    "Hugo",
    "Ines",
    "Jules",
    "Louise",
    "Mathis",
];
const FAMILY: [&str; 10] = [
    "Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy",
    "Moreau",
];
const CITIES: [(&str, &str); 5] = [
    ("75008", "Paris"),
    ("69002", "Lyon"),
    ("33000", "Bordeaux"),
    ("59000", "Lille"),
    ("13001", "Marseille"),
];

impl Demo {
    pub fn new() -> Self {
        let mandates = (1..=MANDATES).map(mandate).collect();
        Demo {
            mandates,
            orders: Vec::new(),
        }
    }
}

fn mandate(i: usize) -> Mandate {
    let given = GIVEN[i % GIVEN.len()];
    let family = FAMILY[(i * 7) % FAMILY.len()];
    let (postal_code, city) = CITIES[i % CITIES.len()];
    // 2018-01-02 plus about a day and a half per mandate, at varying times of day.
    let signed_ms = (1_514_851_200 + i as i64 * 129_600 + (i as i64 % 7) * 3_421) * 1000;
    Mandate {
        id: format!(
            "{:08x}-3975-11e8-8fd1-{:012x}",
            0x5a10_0000 + i,
            0xc0de_0000 + i
        ),
        reference: format!("MND-{i:04}"),
        rum: format!("SLMP{:09}", 3_245_000 + i),
        state: if i.is_multiple_of(10) {
            "revoked"
        } else {
            "active"
        },
        payment_scheme: if i.is_multiple_of(6) {
            "SEPA.DIRECT_DEBIT.B2B"
        } else {
            "SEPA.DIRECT_DEBIT.CORE"
        },
        subscriber: format!("subscriber{i:03}"),
        date_signed: iso8601(signed_ms),
        signatory: json!({
            "honorificPrefix": if i.is_multiple_of(2) { "Mrs" } else { "Mr" },
            "givenName": given,
            "familyName": family,
            "email": format!("{}.{}@example.com", given.to_ascii_lowercase(), family.to_ascii_lowercase()),
            "telephone": format!("+3361234{:04}", i),
            "billingAddress": {
                "street1": format!("{} rue des Fleurs", i % 90 + 1),
                "postalCode": postal_code,
                "city": city,
                "country": "FR",
            },
        }),
    }
}

/// `2018-04-06T08:33:33.111+0000` (the API's format) for milliseconds since the epoch, UTC.
pub fn iso8601(epoch_ms: i64) -> String {
    let seconds = epoch_ms.div_euclid(1000);
    let millis = epoch_ms.rem_euclid(1000);
    let (days, time) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}+0000",
        time / 3600,
        time / 60 % 60,
        time % 60
    )
}

pub fn now_iso8601() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(0))
        .unwrap_or(0);
    iso8601(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(iso8601(1_523_003_613_111), "2018-04-06T08:33:33.111+0000");
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000+0000");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000+0000");
    }

    #[test]
    fn mandates_are_plausible_and_unique() {
        let demo = Demo::new();
        assert_eq!(demo.mandates.len(), MANDATES);
        let mut ids: Vec<_> = demo.mandates.iter().map(|m| m.id.clone()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), MANDATES);
        assert!(demo.mandates.iter().any(|m| m.state == "revoked"));
        assert!(uuid::Uuid::parse_str(&demo.mandates[0].id).is_ok());
    }
}
