import type { AceFunction } from '../record.ts';

/**
 * The function descriptions ACEBench's agent records offer, verbatim per language (typos
 * included: en reserve_flight requires 'payment_methods' but lists 'payment_method'; the sandbox
 * validates calls against the methods' own parameters, not these). Taken from the released
 * data_<lang>/data_agent_*.json; every record of a language offers the same text for a name.
 */
export const RELEASED_FUNCTIONS: Record<'en' | 'zh', Record<string, AceFunction>> = {
  "en": {
    "turn_on_wifi": {
      "name": "turn_on_wifi",
      "description": "Turn on WiFi connection.",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {}
      }
    },
    "login_device": {
      "name": "login_device",
      "description": "Log in to the device.",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {}
      }
    },
    "send_message": {
      "name": "send_message",
      "description": "Send a message from one user to another.",
      "parameters": {
        "type": "dict",
        "required": [
          "sender_name",
          "receiver_name",
          "message"
        ],
        "properties": {
          "sender_name": {
            "type": "string",
            "description": "The name of the user sending the message."
          },
          "receiver_name": {
            "type": "string",
            "description": "The name of the user receiving the message."
          },
          "message": {
            "type": "string",
            "description": "The content of the message to be sent."
          }
        }
      }
    },
    "view_messages_between_users": {
      "name": "view_messages_between_users",
      "description": "Get all the messages sent from one user to another.",
      "parameters": {
        "type": "dict",
        "required": [
          "sender_name",
          "receiver_name"
        ],
        "properties": {
          "sender_name": {
            "type": "string",
            "description": "The name of the user sending the messages."
          },
          "receiver_name": {
            "type": "string",
            "description": "The name of the user receiving the messages."
          }
        }
      }
    },
    "delete_message": {
      "name": "delete_message",
      "description": "Delete a message based on its message ID.",
      "parameters": {
        "type": "dict",
        "required": [
          "message_id"
        ],
        "properties": {
          "message_id": {
            "type": "integer",
            "description": "The ID of the message to be deleted."
          }
        }
      }
    },
    "search_messages": {
      "name": "search_messages",
      "description": "Search for messages from a specific user that contain a particular keyword.",
      "parameters": {
        "type": "dict",
        "required": [
          "user_name",
          "keyword"
        ],
        "properties": {
          "user_name": {
            "type": "string",
            "description": "The name of the user whose messages are being searched."
          },
          "keyword": {
            "type": "string",
            "description": "The keyword to search for within the messages."
          }
        }
      }
    },
    "get_latest_message_id": {
      "name": "get_latest_message_id",
      "description": "Get the ID of the most recently sent message.",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {}
      }
    },
    "get_earliest_message_id": {
      "name": "get_earliest_message_id",
      "description": "Get the ID of the earliest sent message.",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {}
      }
    },
    "add_reminder": {
      "name": "add_reminder",
      "description": "Add a new reminder.",
      "parameters": {
        "type": "dict",
        "required": [
          "title",
          "description",
          "time"
        ],
        "properties": {
          "title": {
            "type": "string",
            "description": "The title of the reminder."
          },
          "description": {
            "type": "string",
            "description": "The description of the reminder."
          },
          "time": {
            "type": "string",
            "description": "The time of the reminder, in the format YYYY-MM-DD HH:MM."
          }
        }
      }
    },
    "view_reminder_by_title": {
      "name": "view_reminder_by_title",
      "description": "View a specific reminder by its title.",
      "parameters": {
        "type": "dict",
        "required": [
          "title"
        ],
        "properties": {
          "title": {
            "type": "string",
            "description": "The title of the reminder to search for."
          }
        }
      }
    },
    "search_reminders": {
      "name": "search_reminders",
      "description": "Search for reminders based on a keyword.",
      "parameters": {
        "type": "dict",
        "required": [
          "keyword"
        ],
        "properties": {
          "keyword": {
            "type": "string",
            "description": "The keyword to search for in the reminder title or description."
          }
        }
      }
    },
    "login_food_platform": {
      "name": "login_food_platform",
      "description": "Log in to the food delivery platform using a username and password.",
      "parameters": {
        "type": "dict",
        "required": [
          "username",
          "password"
        ],
        "properties": {
          "username": {
            "type": "string",
            "description": "The user's username."
          },
          "password": {
            "type": "string",
            "description": "The user's password."
          }
        }
      }
    },
    "check_balance": {
      "name": "check_balance",
      "description": "Check the balance of a specified user.",
      "parameters": {
        "type": "dict",
        "required": [
          "user_name"
        ],
        "properties": {
          "user_name": {
            "type": "string",
            "description": "The user's username."
          }
        }
      }
    },
    "add_food_delivery_order": {
      "name": "add_food_delivery_order",
      "description": "Place a food delivery order.",
      "parameters": {
        "type": "dict",
        "required": [
          "username",
          "merchant_name",
          "items"
        ],
        "properties": {
          "username": {
            "type": "string",
            "description": "The name of the user placing the order."
          },
          "merchant_name": {
            "type": "string",
            "description": "The name of the merchant the order is placed with."
          },
          "items": {
            "type": "list",
            "description": "A list of items in the order, with each item containing name and quantity.",
            "items": {
              "type": "dict",
              "required": [
                "product",
                "quantity"
              ],
              "properties": {
                "product": {
                  "type": "string",
                  "description": "The name of the product."
                },
                "quantity": {
                  "type": "integer",
                  "description": "The quantity of the product."
                }
              }
            }
          }
        }
      }
    },
    "get_products": {
      "name": "get_products",
      "description": "Get a list of products from a specific merchant.",
      "parameters": {
        "type": "dict",
        "required": [
          "merchant_name"
        ],
        "properties": {
          "merchant_name": {
            "type": "string",
            "description": "The name of the merchant whose product list is being retrieved."
          }
        }
      }
    },
    "get_user_details": {
      "name": "get_user_details",
      "description": "Retrieve user details based on user ID and password.",
      "parameters": {
        "type": "dict",
        "required": [
          "user_id",
          "password"
        ],
        "properties": {
          "user_id": {
            "type": "string",
            "description": "The id of the user."
          },
          "password": {
            "type": "string",
            "description": "The password of the user."
          }
        }
      }
    },
    "get_flight_details": {
      "name": "get_flight_details",
      "description": "Retrieve flight details based on origin and destination.",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {
          "origin": {
            "type": "string",
            "description": "The origin city of the flight."
          },
          "destination": {
            "type": "string",
            "description": "The destination city of the flight."
          }
        }
      }
    },
    "get_reservation_details": {
      "name": "get_reservation_details",
      "description": "Retrieve reservation details based on reservation ID or user ID.",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {
          "reservation_id": {
            "type": "string",
            "description": "The reservation ID of the booking."
          },
          "user_id": {
            "type": "string",
            "description": "The ID of the user."
          }
        }
      }
    },
    "reserve_flight": {
      "name": "reserve_flight",
      "description": "Book a flight for the user, including passenger details and payment methods.",
      "parameters": {
        "type": "dict",
        "required": [
          "user_id",
          "password",
          "flight_no",
          "cabin",
          "payment_methods",
          "baggage_count"
        ],
        "properties": {
          "user_id": {
            "type": "string",
            "description": "The ID of the user making the reservation."
          },
          "password": {
            "type": "string",
            "description": "The password of the user for authentication."
          },
          "flight_no": {
            "type": "string",
            "description": "The flight number the user wants to book."
          },
          "cabin": {
            "type": "string",
            "description": "The cabin class (e.g., 经济舱, 商务舱) for the booking."
          },
          "payment_method": {
            "type": "string",
            "description": "the payment method(e.g., bank, cash) to reserve_flight "
          },
          "baggage_count": {
            "type": "integer",
            "description": "The total number of checked baggage items."
          }
        }
      }
    },
    "cancel_reservation": {
      "name": "cancel_reservation",
      "description": "Cancel a flight reservation based on reservation ID and reason for cancellation.",
      "parameters": {
        "type": "dict",
        "required": [
          "user_id",
          "reservation_id",
          "reason"
        ],
        "properties": {
          "user_id": {
            "type": "string",
            "description": "The ID of the user who made the reservation."
          },
          "reservation_id": {
            "type": "string",
            "description": "The ID of the reservation to cancel."
          },
          "reason": {
            "type": "string",
            "description": "Reason for cancellation (e.g., 'schedule change', 'airline canceled', 'other')."
          }
        }
      }
    },
    "modify_flight": {
      "name": "modify_flight",
      "description": "Modify a flight reservation, including changing the flight number, cabin class, and additional baggage, and handling payment method for balance updates if required.",
      "parameters": {
        "type": "dict",
        "required": [
          "user_id",
          "reservation_id"
        ],
        "properties": {
          "user_id": {
            "type": "string",
            "description": "The ID of the user making the modification."
          },
          "reservation_id": {
            "type": "string",
            "description": "The reservation ID of the booking to be modified."
          },
          "new_flight_no": {
            "type": "string",
            "description": "The new flight number to change to (optional).",
            "default": null
          },
          "new_cabin": {
            "type": "string",
            "description": "The new cabin class to change to (optional).",
            "default": null
          },
          "add_baggage": {
            "type": "integer",
            "description": "The number of additional checked baggage items to add (default is 0).",
            "default": 0
          },
          "new_payment_method": {
            "type": "string",
            "description": "Optional payment method for any additional charges (either 'cash' or 'bank'). If not provided, the original payment method will be used.",
            "enum": [
              "cash",
              "bank"
            ],
            "default": null
          }
        }
      }
    },
    "find_transfer_flights": {
      "name": "find_transfer_flights",
      "description": "Find transfer flights from an origin city to a destination city with a stopover in a transfer city, ensuring the first flight arrives before the second flight departs.",
      "parameters": {
        "type": "object",
        "required": [
          "origin_city",
          "transfer_city",
          "destination_city"
        ],
        "properties": {
          "origin_city": {
            "type": "string",
            "description": "The starting city for the flight."
          },
          "transfer_city": {
            "type": "string",
            "description": "The city where the transfer takes place."
          },
          "destination_city": {
            "type": "string",
            "description": "The final destination city for the flight."
          }
        }
      }
    }
  },
  "zh": {
    "turn_on_wifi": {
      "name": "turn_on_wifi",
      "description": "开启WiFi连接。",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {}
      }
    },
    "login_device": {
      "name": "login_device",
      "description": "登录设备。",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {}
      }
    },
    "add_reminder": {
      "name": "add_reminder",
      "description": "添加一个新的提醒。",
      "parameters": {
        "type": "dict",
        "required": [
          "title",
          "description",
          "time"
        ],
        "properties": {
          "title": {
            "type": "string",
            "description": "提醒的标题。"
          },
          "description": {
            "type": "string",
            "description": "提醒的描述。"
          },
          "time": {
            "type": "string",
            "description": "提醒的时间，格式为 YYYY-MM-DD HH:MM。"
          }
        }
      }
    },
    "view_reminder_by_title": {
      "name": "view_reminder_by_title",
      "description": "通过标题查看特定的提醒。",
      "parameters": {
        "type": "dict",
        "required": [
          "title"
        ],
        "properties": {
          "title": {
            "type": "string",
            "description": "要搜索的提醒标题。"
          }
        }
      }
    },
    "search_reminders": {
      "name": "search_reminders",
      "description": "根据关键字搜索提醒。",
      "parameters": {
        "type": "dict",
        "required": [
          "keyword"
        ],
        "properties": {
          "keyword": {
            "type": "string",
            "description": "要在提醒标题或描述中搜索的关键字。"
          }
        }
      }
    },
    "login_food_platform": {
      "name": "login_food_platform",
      "description": "使用用户名和密码登录外卖平台。",
      "parameters": {
        "type": "dict",
        "required": [
          "username",
          "password"
        ],
        "properties": {
          "username": {
            "type": "string",
            "description": "用户的用户名。"
          },
          "password": {
            "type": "string",
            "description": "用户的密码。"
          }
        }
      }
    },
    "check_balance": {
      "name": "check_balance",
      "description": "查询指定用户的余额。",
      "parameters": {
        "type": "dict",
        "required": [
          "user_name"
        ],
        "properties": {
          "user_name": {
            "type": "string",
            "description": "用户的用户名。"
          }
        }
      }
    },
    "add_food_delivery_order": {
      "name": "add_food_delivery_order",
      "description": "订外卖",
      "parameters": {
        "type": "dict",
        "required": [
          "username",
          "merchant_name",
          "items"
        ],
        "properties": {
          "username": {
            "type": "string",
            "description": "下订单的用户姓名。"
          },
          "merchant_name": {
            "type": "string",
            "description": "下订单的商家名称。"
          },
          "items": {
            "type": "list",
            "description": "订单中商品的列表，每个商品包含名称和数量。",
            "items": {
              "type": "dict",
              "required": [
                "product",
                "quantity"
              ],
              "properties": {
                "product": {
                  "type": "string",
                  "description": "商品名称。"
                },
                "quantity": {
                  "type": "integer",
                  "description": "商品数量。"
                }
              }
            }
          }
        }
      }
    },
    "get_products": {
      "name": "get_products",
      "description": "获取特定商家的商品列表。",
      "parameters": {
        "type": "dict",
        "required": [
          "merchant_name"
        ],
        "properties": {
          "merchant_name": {
            "type": "string",
            "description": "要获取商品的商家名称。"
          }
        }
      }
    },
    "send_message": {
      "name": "send_message",
      "description": "将一条消息从一个用户发送给另一个用户。",
      "parameters": {
        "type": "dict",
        "required": [
          "sender_name",
          "receiver_name",
          "message"
        ],
        "properties": {
          "sender_name": {
            "type": "string",
            "description": "发送消息的用户姓名。"
          },
          "receiver_name": {
            "type": "string",
            "description": "接收消息的用户姓名。"
          },
          "message": {
            "type": "string",
            "description": "要发送的消息内容。"
          }
        }
      }
    },
    "view_messages_between_users": {
      "name": "view_messages_between_users",
      "description": "获取特定用户发送给另一个用户的所有消息。",
      "parameters": {
        "type": "dict",
        "required": [
          "sender_name",
          "receiver_name"
        ],
        "properties": {
          "sender_name": {
            "type": "string",
            "description": "发送消息的用户姓名。"
          },
          "receiver_name": {
            "type": "string",
            "description": "接收消息的用户姓名。"
          }
        }
      }
    },
    "delete_message": {
      "name": "delete_message",
      "description": "根据消息 ID 删除一条消息。",
      "parameters": {
        "type": "dict",
        "required": [
          "message_id"
        ],
        "properties": {
          "message_id": {
            "type": "integer",
            "description": "要删除的消息的 ID。"
          }
        }
      }
    },
    "search_messages": {
      "name": "search_messages",
      "description": "搜索特定用户消息中包含特定关键字的消息。",
      "parameters": {
        "type": "dict",
        "required": [
          "user_name",
          "keyword"
        ],
        "properties": {
          "user_name": {
            "type": "string",
            "description": "要搜索消息的用户姓名。"
          },
          "keyword": {
            "type": "string",
            "description": "要在消息中搜索的关键字。"
          }
        }
      }
    },
    "get_latest_message_id": {
      "name": "get_latest_message_id",
      "description": "获取最近发送的消息的 ID。",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {}
      }
    },
    "get_earliest_message_id": {
      "name": "get_earliest_message_id",
      "description": "获取最早发送的消息的 ID。",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {}
      }
    },
    "get_user_details": {
      "name": "get_user_details",
      "description": "根据用户ID和密码获取用户详细信息。",
      "parameters": {
        "type": "dict",
        "required": [
          "user_id",
          "password"
        ],
        "properties": {
          "user_id": {
            "type": "string",
            "description": "用户的ID。"
          },
          "password": {
            "type": "string",
            "description": "用户的密码。"
          }
        }
      }
    },
    "get_flight_details": {
      "name": "get_flight_details",
      "description": "根据出发地和目的地获取航班详情。",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {
          "origin": {
            "type": "string",
            "description": "航班的出发城市。"
          },
          "destination": {
            "type": "string",
            "description": "航班的目的城市。"
          }
        }
      }
    },
    "get_reservation_details": {
      "name": "get_reservation_details",
      "description": "根据预订ID或用户ID获取预订详情。",
      "parameters": {
        "type": "dict",
        "required": [],
        "properties": {
          "reservation_id": {
            "type": "string",
            "description": "预订的ID。"
          },
          "user_id": {
            "type": "string",
            "description": "用户的ID。"
          }
        }
      }
    },
    "reserve_flight": {
      "name": "reserve_flight",
      "description": "为用户预订航班，包括乘客详情和支付方式。",
      "parameters": {
        "type": "dict",
        "required": [
          "user_id",
          "password",
          "flight_no",
          "cabin",
          "payment_method",
          "baggage_count"
        ],
        "properties": {
          "user_id": {
            "type": "string",
            "description": "进行预订的用户ID。"
          },
          "password": {
            "type": "string",
            "description": "用户的密码以进行身份验证。"
          },
          "flight_no": {
            "type": "string",
            "description": "用户想要预订的航班号。"
          },
          "cabin": {
            "type": "string",
            "description": "预订的舱位类别（例如：经济舱，商务舱）。"
          },
          "payment_method": {
            "type": "string",
            "description": "用于预订的支付方式（例如：银行，现金）。"
          },
          "baggage_count": {
            "type": "integer",
            "description": "托运行李的总数量。"
          }
        }
      }
    },
    "cancel_reservation": {
      "name": "cancel_reservation",
      "description": "根据预订ID和取消原因取消航班预订。",
      "parameters": {
        "type": "dict",
        "required": [
          "user_id",
          "reservation_id",
          "reason"
        ],
        "properties": {
          "user_id": {
            "type": "string",
            "description": "进行预订的用户ID。"
          },
          "reservation_id": {
            "type": "string",
            "description": "要取消的预订ID。"
          },
          "reason": {
            "type": "string",
            "description": "取消原因（例如：'计划变更', '航空公司取消航班', '其他原因'）。"
          }
        }
      }
    },
    "modify_flight": {
      "name": "modify_flight",
      "description": "修改航班预订，包括更改航班号、舱位类别和额外行李，并处理余额更新的支付方式（如需要）。",
      "parameters": {
        "type": "dict",
        "required": [
          "user_id",
          "reservation_id"
        ],
        "properties": {
          "user_id": {
            "type": "string",
            "description": "进行修改的用户ID。"
          },
          "reservation_id": {
            "type": "string",
            "description": "要修改的预订ID。"
          },
          "new_flight_no": {
            "type": "string",
            "description": "要更改的新航班号（可选）。",
            "default": null
          },
          "new_cabin": {
            "type": "string",
            "description": "要更改的新舱位类别（可选）。",
            "default": null
          },
          "add_baggage": {
            "type": "integer",
            "description": "要添加的额外托运行李数量（默认是0）。",
            "default": 0
          },
          "new_payment_method": {
            "type": "string",
            "description": "可选的支付方式，用于任何额外费用（可以是'现金'或'银行'）。如果未提供，将使用原支付方式。",
            "enum": [
              "cash",
              "bank"
            ],
            "default": null
          }
        }
      }
    }
  }
};
