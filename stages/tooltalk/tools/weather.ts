import { PyException, keyError, pyStr, requireString } from '../python.ts';
import type { Args, JsonObject, SimTool, Table } from '../tool.ts';

// ToolTalk's Weather suite (src/tooltalk/apis/weather.py). Weather tables are keyed by ISO date
// (normalised when the database is loaded, as ToolTalk parses its keys into dates).

const PLUGIN = 'Weather';
const LOCATION = { type: 'string', description: 'The location to get the weather of.', required: true };
const DAY = {
  type: 'object',
  properties: {
    date: { type: 'string', description: 'The date of the weather.' },
    high: { type: 'number', description: 'The high temperature of the day.' },
    low: { type: 'number', description: 'The low temperature of the day.' },
    conditions: { type: 'string', description: 'The conditions of the day.' },
  },
};

/** The location's table: lower-cased and trimmed, as the tools look it up. */
function locationTable(table: Table, location: Args[string]): { name: string; days: Map<string, JsonObject> } {
  const name = requireString(location, 'lower').toLowerCase().trim();
  const days = table.get(name);
  if (!days) throw new PyException(`Location ${name} not found in database`);
  return { name, days };
}

export const CurrentWeather: SimTool = {
  name: 'CurrentWeather',
  plugin: PLUGIN,
  description: 'Get the current weather of a location.',
  parameters: { location: LOCATION },
  output: { weather: { ...DAY, description: 'The weather of the location.' } },
  isAction: false,
  requiresAuth: false,
  call(ctx, { location }: Args) {
    const { days } = locationTable(ctx.databases.Weather, location);
    const today = days.get(ctx.now.date.key());
    if (!today) throw keyError(ctx.now.date);
    return { weather: today };
  },
};

export const ForecastWeather: SimTool = {
  name: 'ForecastWeather',
  plugin: PLUGIN,
  description: 'Get the 3-day forecast weather of a location.',
  parameters: { location: LOCATION },
  output: { forecast: { type: 'array', item: DAY, description: 'list containing weather information for next 5 days.' } },
  isAction: false,
  requiresAuth: false,
  call(ctx, { location }: Args) {
    const { days } = locationTable(ctx.databases.Weather, location);
    const forecast = [1, 2, 3].map((offset) => {
      const date = ctx.now.date.addDays(offset);
      const day = days.get(date.key());
      if (!day) throw keyError(date);
      return day;
    });
    return { forecast };
  },
};

export const HistoricWeather: SimTool = {
  name: 'HistoricWeather',
  plugin: PLUGIN,
  description: 'Get historic weather information of a location by month.',
  parameters: {
    location: LOCATION,
    month: { type: 'string', description: 'The month to get weather of as a full name.', required: true },
  },
  output: {
    weather: {
      type: 'object',
      properties: {
        min_temp: { type: 'number', description: 'The minimum temperature of the month in fahrenheit.' },
        max_temp: { type: 'number', description: 'The maximum temperature of the month in fahrenheit.' },
        record_min_temp: { type: 'number', description: 'The record minimum temperature of the month in fahrenheit.' },
        record_max_temp: { type: 'number', description: 'The record maximum temperature of the month in fahrenheit.' },
        avg_rainfall: { type: 'number', description: 'The average rainfall of the month in inches.' },
        snow_days: { type: 'number', description: 'The number of snow days of the month.' },
      },
      description: 'Historic weather of location for month.',
    },
  },
  isAction: false,
  requiresAuth: false,
  call(ctx, { location, month }: Args) {
    const { name, days: months } = locationTable(ctx.databases.HistoricWeather, location);
    const monthName = requireString(month, 'lower').toLowerCase();
    const weather = months.get(monthName);
    if (!weather) throw new PyException(`Historic weather data for ${pyStr(name)} missing for month ${monthName}`);
    return { weather };
  },
};

export const WEATHER_TOOLS: readonly SimTool[] = [CurrentWeather, ForecastWeather, HistoricWeather];
