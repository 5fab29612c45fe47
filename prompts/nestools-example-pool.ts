/**
 * In-context examples for NesTools generation (§3.1: "a sample pool … rotated during the iterative
 * generation"). Each shows a different nesting structure; the generator shows a few per request,
 * rotating through the pool. Written for toolkiln; a config may point to another pool file (JSONL of
 * `{"domain", "answer"}`).
 */

export interface PoolExample {
  domain: string;
  /** Structure in Figure 5 notation, for reading the pool. */
  structure: string;
  answer: string;
}

const FENCE = '```';

export const EXAMPLE_POOL: PoolExample[] = [
  {
    domain: 'Travel/Rail travel',
    structure: '1→2, 2→3',
    answer: `${FENCE}python
def find_train_connection(origin: str, destination: str, travel_date: str, travel_class: str = None):
    """Find the earliest train connection between two stations on a given day.

    required parameters:
    origin (str): the departure station
    destination (str): the arrival station
    travel_date (str): the day of travel in 'YYYY-MM-DD' format

    optional parameters:
    travel_class (str): first or second class

    Returns:
    connection_id (str): identifier of the chosen connection
    departure_time (str): departure time in 'HH:MM' format
    """
    ...


def reserve_train_seat(connection_id: str, passenger_name: str):
    """Reserve a seat on a train connection for one passenger.

    required parameters:
    connection_id (str): identifier of the connection to book
    passenger_name (str): full name of the traveller

    Returns:
    booking_reference (str): reference code of the reservation
    """
    ...


def send_travel_itinerary(booking_reference: str, email: str):
    """Email the itinerary of a booking to the traveller.

    required parameters:
    booking_reference (str): reference code of the reservation
    email (str): address the itinerary goes to

    Returns:
    delivered (bool): whether the email was accepted for delivery
    """
    ...


def main():
    data0, data1 = find_train_connection("Lyon Part-Dieu", "Geneva", "2024-03-14", travel_class="second")
    data2 = reserve_train_seat(data0, "Clara Meunier")
    data3 = send_travel_itinerary(data2, "clara.meunier@example.org")
    # I'm travelling from Lyon Part-Dieu to Geneva on 14 March 2024 in second class. Please find
    # me the earliest train, reserve a seat for Clara Meunier, and email the itinerary to
    # clara.meunier@example.org.


if __name__ == "__main__":
    main()
${FENCE}`,
  },
  {
    domain: 'Agriculture/Soil science',
    structure: '1→2, 1→3',
    answer: `${FENCE}python
def analyze_soil_sample(sample_id: str, depth_cm: int):
    """Run a laboratory analysis of a soil sample.

    required parameters:
    sample_id (str): label of the soil sample
    depth_cm (int): depth the sample was taken from, in centimetres

    Returns:
    ph_level (float): measured acidity of the soil
    nitrogen_ppm (float): nitrogen content in parts per million
    """
    ...


def recommend_lime_dose(ph_level: float, field_area_ha: float):
    """Work out how much agricultural lime raises the soil pH to a good range.

    required parameters:
    ph_level (float): current acidity of the soil
    field_area_ha (float): size of the field in hectares

    Returns:
    lime_tonnes (float): amount of lime to spread, in tonnes
    """
    ...


def plan_fertilizer(nitrogen_ppm: float, crop: str, target_yield: float = None):
    """Plan a fertilizer schedule for a crop from the soil's nitrogen content.

    required parameters:
    nitrogen_ppm (float): nitrogen content of the soil in parts per million
    crop (str): the crop to be grown

    optional parameters:
    target_yield (float): expected harvest in tonnes per hectare

    Returns:
    schedule (list): fertilizer applications with dates and amounts
    """
    ...


def main():
    data0, data1 = analyze_soil_sample("NORTH-07", 30)
    data2 = recommend_lime_dose(data0, 12.5)
    data3 = plan_fertilizer(data1, "winter wheat", target_yield=8.0)
    # Analyse soil sample NORTH-07, taken at 30 cm. Based on its acidity, tell me how much lime
    # my 12.5 hectare field needs, and use its nitrogen level to plan fertilizing for winter
    # wheat with a target yield of 8 tonnes per hectare.


if __name__ == "__main__":
    main()
${FENCE}`,
  },
  {
    domain: 'Real Estate/Property valuation',
    structure: '1→3, 2→3',
    answer: `${FENCE}python
def get_property_record(address: str):
    """Look up the registry record of a property.

    required parameters:
    address (str): street address of the property

    Returns:
    floor_area (float): living area in square metres
    build_year (int): year the building was completed
    """
    ...


def get_neighborhood_prices(postcode: str, months: int = None):
    """Get recent sale prices in a neighbourhood.

    required parameters:
    postcode (str): postal code of the neighbourhood

    optional parameters:
    months (int): how many months of sales to include

    Returns:
    price_per_sqm (float): median sale price per square metre
    """
    ...


def estimate_market_value(floor_area: float, price_per_sqm: float, build_year: int):
    """Estimate what a property would sell for today.

    required parameters:
    floor_area (float): living area in square metres
    price_per_sqm (float): local median price per square metre
    build_year (int): year the building was completed

    Returns:
    estimated_value (float): estimated market value in euros
    confidence (str): low, medium or high
    """
    ...


def main():
    data0, data1 = get_property_record("14 Keizersgracht, Amsterdam")
    data2 = get_neighborhood_prices("1015 CX", months=6)
    data3, data4 = estimate_market_value(data0, data2, data1)
    # What is the flat at 14 Keizersgracht, Amsterdam worth today? Use its registry record and
    # the sale prices of the last 6 months in postcode 1015 CX.


if __name__ == "__main__":
    main()
${FENCE}`,
  },
  {
    domain: 'Healthcare/Telemedicine',
    structure: '1→2, 1→3, 2→3',
    answer: `${FENCE}python
def register_patient(full_name: str, birth_date: str):
    """Register a patient with the telemedicine service.

    required parameters:
    full_name (str): the patient's full name
    birth_date (str): date of birth in 'YYYY-MM-DD' format

    Returns:
    patient_id (str): identifier assigned to the patient
    """
    ...


def book_video_consultation(patient_id: str, specialty: str, preferred_day: str):
    """Book a video consultation with a doctor of a given specialty.

    required parameters:
    patient_id (str): identifier of the patient
    specialty (str): medical specialty of the doctor
    preferred_day (str): requested day in 'YYYY-MM-DD' format

    Returns:
    appointment_id (str): identifier of the appointment
    """
    ...


def send_appointment_reminder(patient_id: str, appointment_id: str, channel: str = None):
    """Remind a patient of an upcoming appointment.

    required parameters:
    patient_id (str): identifier of the patient
    appointment_id (str): identifier of the appointment

    optional parameters:
    channel (str): sms or email

    Returns:
    reminder_sent (bool): whether the reminder went out
    """
    ...


def main():
    data0 = register_patient("Tomasz Wolski", "1986-11-02")
    data1 = book_video_consultation(data0, "dermatology", "2024-05-20")
    data2 = send_appointment_reminder(data0, data1, channel="sms")
    # Register Tomasz Wolski, born on 2 November 1986, book him a video consultation in
    # dermatology on 20 May 2024, and send him an SMS reminder about it.


if __name__ == "__main__":
    main()
${FENCE}`,
  },
  {
    domain: 'Music/Music streaming',
    structure: '1→2, 2→3, 2→4',
    answer: `${FENCE}python
def search_artist(artist_name: str):
    """Find an artist in the streaming catalogue.

    required parameters:
    artist_name (str): name of the artist

    Returns:
    artist_id (str): catalogue identifier of the artist
    """
    ...


def get_top_tracks(artist_id: str, limit: int = None):
    """List an artist's most played tracks.

    required parameters:
    artist_id (str): catalogue identifier of the artist

    optional parameters:
    limit (int): how many tracks to return

    Returns:
    track_ids (list): identifiers of the tracks, most played first
    """
    ...


def create_playlist(title: str, track_ids: list, public: bool = None):
    """Create a playlist from a list of tracks.

    required parameters:
    title (str): title of the playlist
    track_ids (list): identifiers of the tracks to add

    optional parameters:
    public (bool): whether other users can see the playlist

    Returns:
    playlist_id (str): identifier of the new playlist
    """
    ...


def download_for_offline(track_ids: list, quality: str):
    """Download tracks for listening offline.

    required parameters:
    track_ids (list): identifiers of the tracks
    quality (str): audio quality, such as normal or high

    Returns:
    downloaded_count (int): how many tracks were downloaded
    """
    ...


def main():
    data0 = search_artist("Nina Simone")
    data1 = get_top_tracks(data0, limit=15)
    data2 = create_playlist("Evening with Nina", data1, public=False)
    data3 = download_for_offline(data1, "high")
    # Put Nina Simone's 15 most played songs in a private playlist called "Evening with Nina"
    # and download them in high quality so I can listen offline.


if __name__ == "__main__":
    main()
${FENCE}`,
  },
  {
    domain: 'Finance/Personal budgeting',
    structure: '1→2',
    answer: `${FENCE}python
def summarize_spending(account_id: str, month: str, categories: list = None):
    """Summarize a month of spending on a bank account by category.

    required parameters:
    account_id (str): identifier of the bank account
    month (str): the month in 'YYYY-MM' format

    optional parameters:
    categories (list): spending categories to include

    Returns:
    total_spent (float): total amount spent in the month
    largest_category (str): category with the highest spending
    """
    ...


def set_budget_alert(category: str, monthly_limit: float, notify_at_percent: int = None):
    """Set an alert that fires when spending in a category nears a limit.

    required parameters:
    category (str): spending category to watch
    monthly_limit (float): the most to spend per month

    optional parameters:
    notify_at_percent (int): share of the limit at which to notify

    Returns:
    alert_id (str): identifier of the alert
    """
    ...


def main():
    data0, data1 = summarize_spending("CHK-2231", "2024-02", categories=["groceries", "dining", "transport"])
    data2 = set_budget_alert(data1, 400.0, notify_at_percent=80)
    # Look at February 2024 on account CHK-2231 for groceries, dining and transport, then set a
    # 400 monthly limit on whichever of those I spent most on, warning me at 80 percent.


if __name__ == "__main__":
    main()
${FENCE}`,
  },
  {
    domain: 'Education/Online courses',
    structure: '1→2, 1→3, 2→3',
    answer: `${FENCE}python
def enroll_student(student_email: str, course_code: str):
    """Enroll a student in an online course.

    required parameters:
    student_email (str): the student's email address
    course_code (str): code of the course

    Returns:
    enrollment_id (str): identifier of the enrollment
    start_date (str): first day of the course in 'YYYY-MM-DD' format
    """
    ...


def generate_study_plan(enrollment_id: str, hours_per_week: int):
    """Draw up a weekly study plan for an enrollment.

    required parameters:
    enrollment_id (str): identifier of the enrollment
    hours_per_week (int): hours the student can study each week

    Returns:
    plan_id (str): identifier of the study plan
    """
    ...


def schedule_mentor_session(enrollment_id: str, plan_id: str, date: str):
    """Schedule a session with a mentor to go through a study plan.

    required parameters:
    enrollment_id (str): identifier of the enrollment
    plan_id (str): identifier of the study plan to discuss
    date (str): date of the session in 'YYYY-MM-DD' format

    Returns:
    session_link (str): video link for the session
    """
    ...


def main():
    data0, data1 = enroll_student("amara.obi@example.com", "DS-201")
    data2 = generate_study_plan(data0, 6)
    data3 = schedule_mentor_session(data0, data2, data1)
    # Enroll amara.obi@example.com in course DS-201, make her a study plan for 6 hours a week,
    # and book a mentor session on the first day of the course to go through that plan.


if __name__ == "__main__":
    main()
${FENCE}`,
  },
  {
    domain: 'Environmental Science/Air quality monitoring',
    structure: '1→2, 2→3, 3→4',
    answer: `${FENCE}python
def locate_nearest_station(latitude: float, longitude: float):
    """Find the air quality station nearest to a point.

    required parameters:
    latitude (float): latitude of the point
    longitude (float): longitude of the point

    Returns:
    station_code (str): code of the nearest station
    """
    ...


def read_pollutant_levels(station_code: str, pollutant: str, hours: int = None):
    """Read recent measurements of a pollutant at a station.

    required parameters:
    station_code (str): code of the station
    pollutant (str): pollutant to read, such as PM2.5 or NO2

    optional parameters:
    hours (int): how many past hours to read

    Returns:
    average_concentration (float): mean concentration in micrograms per cubic metre
    """
    ...


def classify_air_quality(concentration: float, pollutant: str):
    """Turn a pollutant concentration into an air quality category.

    required parameters:
    concentration (float): concentration in micrograms per cubic metre
    pollutant (str): the pollutant measured

    Returns:
    category (str): air quality category, from good to hazardous
    """
    ...


def publish_health_advice(category: str, audience: str):
    """Publish health advice for an air quality category.

    required parameters:
    category (str): air quality category
    audience (str): who the advice is for, such as schools or the general public

    Returns:
    advice_url (str): where the advice was published
    """
    ...


def main():
    data0 = locate_nearest_station(52.2297, 21.0122)
    data1 = read_pollutant_levels(data0, "PM2.5", hours=24)
    data2 = classify_air_quality(data1, "PM2.5")
    data3 = publish_health_advice(data2, "schools")
    # Check the PM2.5 level over the last 24 hours at the station closest to 52.2297, 21.0122,
    # rate the air quality, and publish matching health advice for schools.


if __name__ == "__main__":
    main()
${FENCE}`,
  },
];

/** The examples one request shows: a window of `count` that moves along a shuffled pool. */
export function rotateExamples<T>(pool: readonly T[], requestIndex: number, count: number): T[] {
  if (!pool.length || count <= 0) return [];
  const take = Math.min(count, pool.length);
  return Array.from({ length: take }, (_, i) => pool[(requestIndex * take + i) % pool.length]);
}

/** Examples as the prompt shows them. */
export function formatExamples(examples: { domain: string; answer: string }[]): string {
  return examples.map((example) => `Domain: ${example.domain}\nAnswer:\n${example.answer}`).join('\n\n');
}
